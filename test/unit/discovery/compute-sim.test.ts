import { describe, expect, it } from 'vitest';
import { clustersTheMapHolds, gpcLayout, groupsFromPlacements, tpcsFromPairs } from '../../../server/discovery/strategies/compute-gpc.js';
import { reanalyse } from '../../../server/discovery/index.js';
import type { ProbeChannel } from '../../../server/gpu/backend.js';
import { ProbeError } from '../../../server/protocol/probe-error.js';
import { GPU_MODELS, type GpuModel } from '../../../server/gpu/sim/index.js';
import { migClusterShare } from '../../../server/topology/mig.js';
import { measureCompute, openSimulated } from '../../helpers/sim-channel.js';
import { SHARED_H100_SEED, simulatedDiscovery, WHOLE_DISCOVERY_TIMEOUT_MS } from '../../helpers/simulated-discovery.js';

const H100 = GPU_MODELS['h100-sxm5-80gb']!;
const A100 = GPU_MODELS['a100-40gb']!;

const open = openSimulated;

/** The model's SM groups (GPCs, then the TPCs kept out of larger clusters) as listed: SM ids ascending, groups by their lowest SM. */
function truthGroups(model: GpuModel): number[][] {
  const groups: number[][] = [];
  for (const [sm, gpc] of model.compute.gpcOfSm.entries()) {
    groups[gpc] ??= [];
    groups[gpc].push(sm);
  }
  return groups.sort((a, b) => a[0]! - b[0]!);
}

const truthGpcs = (model: GpuModel) => truthGroups(model).filter((g) => g.length > 2);
const truthIsolatedTpcs = (model: GpuModel) => truthGroups(model).filter((g) => g.length <= 2);

function near(actual: number | undefined, truth: number, tolerance = 0.03): void {
  expect(actual).toBeDefined();
  expect(Math.abs(actual! - truth) / truth).toBeLessThan(tolerance);
}

describe('compute topology on the simulated H100 (thread block clusters)', () => {
  const clusters = H100.compute.clusters!;

  it('recovers the SM -> GPC map exactly, unequal GPCs summing to the SM count, the same in three runs', async () => {
    const truth = truthGpcs(H100);
    expect(new Set(truth.map((g) => g.length)).size).toBeGreaterThan(1); // the model's GPCs are unequal
    expect(truthIsolatedTpcs(H100).length).toBeGreaterThan(0); // and some TPCs only take clusters of two
    for (const seed of [1, 2, 3]) {
      const { compute } = await measureCompute(await open(H100, seed));
      expect(compute.gpcs?.smIds).toEqual(truth);
      expect(compute.gpcs?.tpcsOfUnknownGpc).toEqual(truthIsolatedTpcs(H100));
      expect(compute.gpcs?.count).toMatchObject({ value: truth.length, source: 'microbenchmark', confidence: 1 });
      const placed = compute.gpcs!.smsPerGpc.reduce((a, b) => a + b, 0) + compute.gpcs!.tpcsOfUnknownGpc.flat().length;
      expect(placed).toBe(H100.device.multiprocessorCount);
      expect(compute.gpcs?.unplacedSmIds).toEqual([]);
      // The model's TPCs are SM pairs 2k, 2k + 1, and clusters of two always land on one.
      expect(compute.gpcs?.tpcs).toEqual(Array.from({ length: H100.device.multiprocessorCount / 2 }, (_, t) => [2 * t, 2 * t + 1]));
      expect(compute.gpcs?.occupancyAgreement).toBe(1);
      expect(compute.smIds).toEqual(H100.compute.gpcOfSm.map((_, sm) => sm));
    }
  });

  it('recovers cluster limits, active clusters and idle SMs per size exactly', async () => {
    const { compute } = await measureCompute(await open(H100, 5));
    const c = compute.clusters;
    expect(c.supported).toBe(true);
    expect(c.maxPortableClusterSize?.value).toBe(clusters.maxPortableClusterSize);
    expect(c.maxClusterSize?.value).toBe(clusters.maxClusterSize);
    const gpcSizes = truthGroups(H100).map((g) => g.length);
    const sms = H100.device.multiprocessorCount;
    expect(c.bySize.map((row) => row.clusterSize)).toEqual(Array.from({ length: clusters.maxClusterSize }, (_, i) => i + 1));
    for (const row of c.bySize) {
      const active = gpcSizes.reduce((sum, n) => sum + Math.floor(n / row.clusterSize), 0);
      expect(row, `size ${row.clusterSize}`).toEqual({
        clusterSize: row.clusterSize,
        activeClusters: active,
        idleSms: sms - active * row.clusterSize,
        measuredIdleSms: sms - active * row.clusterSize,
      });
    }
  });

  it('recovers barrier latencies, DSMEM latency ordering and push > pull bandwidth, launch overhead by waves', async () => {
    const { compute } = await measureCompute(await open(H100, 7));
    const b = clusters.barrier;
    const sync = compute.clusters.sync;
    for (const row of sync.filter((r) => r.threadsPerBlock === 1)) {
      const s = row.clusterSize;
      const arrive = b.arriveCycles + b.arriveCyclesPerBlockOver8 * Math.max(0, s - 8);
      const wait = b.waitCycles + b.waitCyclesPerBlock * (s - 1);
      near(row.arrive.p50, arrive);
      near(row.wait.p50, wait, 0.05);
      near(row.clusterSync.p50, arrive + wait);
      near(row.syncthreads.p50, b.syncthreadsCycles, 0.1);
      near(row.gridSync.p50, b.gridSyncCycles + b.gridSyncCyclesPerBlock * (s - 1));
    }
    expect(sync.map((r) => [r.clusterSize, r.threadsPerBlock])).toEqual([
      [1, 1],
      [2, 1],
      [4, 1],
      [8, 1],
      [16, 1],
      [16, 1024],
    ]);

    const d = compute.clusters.dsmem!;
    near(d.localLatency.p50, H100.shared.latencyCycles);
    near(d.remoteLatency.p50, clusters.dsmem.remoteLatencyCycles);
    expect(d.localLatency.p50).toBeLessThan(d.remoteLatency.p50);
    expect(d.remoteLatency.p50).toBeLessThan(d.l2Latency.p50);
    expect(d.pushBandwidth.value).toBeGreaterThan(d.pullBandwidth.value);
    expect(d.pullBandwidth.value).toBeGreaterThan(d.globalBandwidth.value);
    expect(d.pushBandwidth).toMatchObject({ unit: 'bytes/s', source: 'microbenchmark' });
    expect(new Set(d.smIds.map((sm) => H100.compute.gpcOfSm[sm])).size).toBe(1);

    // Plain: 4 waves of 132 blocks. Clustered: whole clusters per wave (size 2 fills every SM; 4, 8 and 16 leave 4 idle, so a fifth wave).
    const overhead = Object.fromEntries(compute.clusters.launchOverhead.map((row) => [row.clusterSize, row.overheadFraction]));
    expect(Math.abs(overhead[2]!)).toBeLessThan(0.02);
    for (const size of [4, 8, 16]) expect(overhead[size]!, `size ${size}`).toBeGreaterThan(0.15);
  });

  it('adds well under 5 s of simulated GPU time and is rebuilt alike from its raw series', async () => {
    const channel = await open(H100, 9);
    const before = channel.simulatedDeviceSeconds();
    const { compute, session } = await measureCompute(channel);
    expect(channel.simulatedDeviceSeconds() - before).toBeLessThan(1);
    const again = reanalyse(session.raw).compute;
    expect(again).toEqual(compute);
  });

  it(
    'puts the section in a full discovery, and a probe refusing a cluster op leaves the census and says why',
    async () => {
      const { outcome } = await simulatedDiscovery({ model: H100.id, seed: SHARED_H100_SEED });
      expect(outcome.compute?.gpcs?.count.value).toBe(truthGpcs(H100).length);
      expect(outcome.compute?.coresPerSm).toEqual({ value: 128, unit: 'count', source: 'table' });

      const sim = await open(H100, 12);
      const refusing: ProbeChannel = {
        request: async (op, args, options) => {
          if (op === 'cluster.dsmem') throw new ProbeError('unsupported', 'no DSMEM on this partition');
          return sim.request(op, args, options);
        },
        close: () => sim.close(),
      };
      const { compute, session } = await measureCompute(refusing);
      expect(compute.clusters).toMatchObject({
        supported: false,
        reason: 'the probe answered unsupported: no DSMEM on this partition',
        bySize: [],
      });
      expect(compute.gpcs).toBeNull();
      expect(compute.smIds).toHaveLength(H100.device.multiprocessorCount);
      expect(session.raw.map((s) => s.name).filter((n) => n.startsWith('compute.'))).toEqual([
        'compute.smid.census',
        'compute.cluster.refused',
      ]);
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );
});

describe('compute topology on the simulated A100 (no clusters)', () => {
  it('reports the SM limits and table values, and clusters unsupported with the reason', async () => {
    const { compute, session } = await measureCompute(await open(A100, 1));
    expect(session.raw.map((s) => s.op)).toEqual(['hello', 'calibrate', 'compute.smid']);
    expect(compute.multiprocessorCount).toEqual({ value: 108, unit: 'count', source: 'api' });
    expect(compute.coresPerSm?.value).toBe(64);
    expect(compute.warpSchedulersPerSm?.value).toBe(4);
    expect(compute.maxThreadsPerSm?.value).toBe(A100.device.maxThreadsPerMultiprocessor);
    expect(compute.smIds).toHaveLength(108);
    expect(compute.gpcs).toBeNull();
    expect(compute.clusters).toEqual({
      supported: false,
      reason: 'thread block clusters need compute capability 9.0 or newer; this device is sm_80',
      maxPortableClusterSize: null,
      maxClusterSize: null,
      bySize: [],
      sync: [],
      launchOverhead: [],
      dsmem: null,
    });
  });
});

describe('the GPC map from placements', () => {
  it('joins SMs that share a cluster and keeps apart those that never do', () => {
    expect(
      groupsFromPlacements([
        { clusterSize: 2, smIds: [0, 1, 2, 3, 4, 5] },
        { clusterSize: 2, smIds: [1, 2, 9, 8] },
      ]),
    ).toEqual([
      [0, 1, 2, 3],
      [4, 5],
      [8, 9],
    ]);
  });

  it('lists SMs only ever in clusters of two as TPCs of unknown GPC, and checks the map against the occupancy API', () => {
    const round = [
      { clusterSize: 2, smIds: [0, 1, 2, 3, 4, 5, 6, 7] },
      { clusterSize: 4, smIds: [0, 1, 2, 3] },
    ];
    const layout = gpcLayout([round, round], [0, 1, 2, 3, 4, 5, 6, 7, 8], 'n', [9, 4, 1, 1]);
    expect(layout.smIds).toEqual([[0, 1, 2, 3]]);
    expect(layout.count.value).toBe(1);
    expect(layout.tpcsOfUnknownGpc).toEqual([
      [4, 5],
      [6, 7],
    ]);
    expect(layout.tpcs).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
      [6, 7],
    ]);
    expect(layout.unplacedSmIds).toEqual([8]);
    // holds 4 clusters of two, 1 of three and 1 of four: sizes 2, 3 and 4 agree
    expect(layout.occupancyAgreement).toBe(1);
    expect(gpcLayout([round], [0, 1, 2, 3, 4, 5, 6, 7], 'n', [8, 3, 1, 1]).occupancyAgreement).toBeCloseTo(2 / 3);
    expect(gpcLayout([round], [0, 1, 2, 3, 4, 5, 6, 7], 'n').occupancyAgreement).toBeNull();
  });

  it('tells TPCs apart only where clusters of two always land on the same pair', () => {
    expect(
      tpcsFromPairs([
        { clusterSize: 2, smIds: [0, 1, 2, 3] },
        { clusterSize: 2, smIds: [3, 2, 1, 0] },
      ]),
    ).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(
      tpcsFromPairs([
        { clusterSize: 2, smIds: [0, 1, 2, 3] },
        { clusterSize: 2, smIds: [1, 2, 0, 3] },
      ]),
    ).toBeNull();
    expect(tpcsFromPairs([{ clusterSize: 4, smIds: [0, 1, 2, 3] }])).toBeNull();
    expect(
      clustersTheMapHolds(
        [
          [0, 1, 2],
          [3, 4],
        ],
        2,
      ),
    ).toBe(2);
  });

  it('derives a MIG instance’s GPC share from its profile', async () => {
    const { compute } = await measureCompute(await open(H100, 4));
    expect(migClusterShare(compute, { smCount: 16, computeSlices: 1 })).toEqual({
      gpcCount: 1,
      smsPerGpc: 16,
      largestCluster: 16,
      source: 'derived',
    });
    expect(migClusterShare(compute, { smCount: 60, computeSlices: 3 })).toEqual({
      gpcCount: 3,
      smsPerGpc: 18,
      largestCluster: 16,
      source: 'derived',
    });
    expect(migClusterShare(compute, { smCount: 26, computeSlices: 2 })).toEqual({
      gpcCount: 2,
      smsPerGpc: 13,
      largestCluster: 13,
      source: 'derived',
    });
    const { compute: a100 } = await measureCompute(await open(A100, 4));
    expect(migClusterShare(a100, { smCount: 14, computeSlices: 1 })).toBeNull();
  });
});
