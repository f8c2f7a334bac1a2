import { describe, expect, it } from 'vitest';
import { barrierVerdict, parseBarrierReference, renderCompute, sameGpcMap } from '../../../scripts/validate/compute.js';
import { GPU_MODELS } from '../../../server/gpu/sim/index.js';
import type { ComputeTopology } from '../../../server/model/compute-schema.js';
import { measureCompute, openSimulated } from '../../helpers/sim-channel.js';

// A synthetic reference section in the shape validate:gpu reads (not real figures).
const MARKDOWN = `# refs

## Caches of Test GPU

| element | attribute | MT4G | other |
|---|---|---|---|

## Thread block clusters (Test GPU, 10 SMs)

Max portable cluster size 8; cluster
barrier arrive ~100 cycles, wait 10–20, cluster.sync ~300, __syncthreads 5,
grid.sync ~900 cycles; idle SMs at cluster size 4/2: 2/0.
`;

async function simulatedCompute(modelId: string, seed: number): Promise<ComputeTopology> {
  const channel = await openSimulated(GPU_MODELS[modelId]!, seed);
  const { compute } = await measureCompute(channel);
  await channel.close();
  return compute;
}

describe('validate:gpu compute tables', () => {
  it('reads the barrier latencies and idle SMs of the reference file’s cluster section', () => {
    expect(parseBarrierReference(MARKDOWN)).toEqual({
      heading: 'Thread block clusters (Test GPU, 10 SMs)',
      arrive: [100, 100],
      wait: [10, 20],
      clusterSync: [300, 300],
      syncthreads: [5, 5],
      gridSync: [900, 900],
      idleSms: { 4: 2, 2: 0 },
    });
    expect(parseBarrierReference('# refs\n\n## L1\n')).toBeNull();
  });

  it('calls a barrier within 25 % of either end of the range, and says by how much it differs otherwise', () => {
    expect(barrierVerdict(12, [10, 20])).toBe('within 25 %');
    expect(barrierVerdict(24, [10, 20])).toBe('within 25 %');
    expect(barrierVerdict(30, [10, 20])).toBe('DIFFERS (50 %)');
    expect(barrierVerdict(5, [10, 20])).toBe('DIFFERS (-50 %)');
    expect(barrierVerdict(5, undefined)).toBe('');
  });

  it('prints the simulated H100’s GPCs, occupancy, barriers, DSMEM order and launch overhead', async () => {
    const compute = await simulatedCompute('h100-sxm5-80gb', 3);
    const text = renderCompute(compute, parseBarrierReference(MARKDOWN)).join('\n');
    const sms = compute.multiprocessorCount.value;
    expect(text).toContain(`= ${sms} of ${sms} SMs;`);
    expect(text).toMatch(/the map explains cudaOccupancyMaxActiveClusters for 100 % of cluster sizes/);
    expect(text.split('\n').find((line) => line.startsWith('GPCs:'))).not.toContain('DIFFERS');
    expect(text).toMatch(/barriers at cluster size 8, 1 thread\/block, against the reference: arrive DIFFERS/);
    expect(text).toMatch(/local < DSMEM < L2 as expected/);
    expect(text).toMatch(/push > pull as the paper found/);
    expect(text).toMatch(/\| reference \| \| 100 \| 10–20 \| 300 \| 5 \| 900 \|/);
    for (const row of compute.clusters.bySize)
      expect(text).toContain(`| ${row.clusterSize} | ${row.activeClusters} | ${row.idleSms} | ${row.measuredIdleSms ?? '—'} |`);
    expect(sameGpcMap([compute, await simulatedCompute('h100-sxm5-80gb', 4)])).toBe('GPC map: the same in all 2 runs');
  });

  it('says why clusters are missing on the A100, and flags maps that differ or are missing', async () => {
    const a100 = await simulatedCompute('a100-40gb', 1);
    expect(renderCompute(a100, null).at(-1)).toMatch(/^clusters: unsupported \(.+\)$/);
    expect(renderCompute(undefined, null)).toEqual(['compute: not in this document']);
    const h100 = await simulatedCompute('h100-sxm5-80gb', 5);
    const moved: ComputeTopology = { ...h100, gpcs: { ...h100.gpcs!, smIds: [...h100.gpcs!.smIds].reverse() } };
    expect(sameGpcMap([h100, moved])).toBe('GPC map: DIFFERS across runs (2 distinct maps in 2 runs)');
    expect(sameGpcMap([h100, a100])).toBe('GPC map: missing in some run');
  });
});
