import { describe, expect, it } from 'vitest';
import { detectSizeChangePoint, type ChangePointResult } from '../../../server/analysis/index.js';
import { discover } from '../../../server/discovery/index.js';
import { linearSizes } from '../../../server/discovery/sizes.js';
import { sweepPoints } from '../../../server/discovery/sweep-series.js';
import {
  CHASE_KERNEL_STATIC_SHARED_BYTES,
  GPU_MODELS,
  l1CapacityBytes,
  SimulatedChannel,
  SimulatedDevice,
  SimulatedProbe,
  type GpuModel,
} from '../../../server/gpu/sim/index.js';
import { Prng } from '../../../server/gpu/sim/prng.js';
import type { RawSeries } from '../../../server/model/document.js';

/**
 * An L1 whose set index is rotated per 256 KiB page (the sim's optional
 * placement-dependent conflict component): arrays below the capacity that
 * straddle a page boundary thrash a few sets at some placements only, as on
 * the H100 of test/fixtures/h100/discovery-run.json.
 */
const h100 = GPU_MODELS['h100-sxm5-80gb']!;
const SERIES = 'l1.size.placements';
/** The L1 left by the carveout a 2048-sample launch gets (server/gpu/sim/launch.ts). */
const l1Truth = (model: GpuModel) => l1CapacityBytes(model, 2048 * 4 + 4 + CHASE_KERNEL_STATIC_SHARED_BYTES, 0);

function conflictingL1(seed: number): { model: GpuModel; channel: SimulatedChannel } {
  const model: GpuModel = { ...h100, l1: { ...h100.l1, pageSetRotation: { pageBytes: 256 * 1024, seed } } };
  const identity = { index: 0, uuid: 'GPU-00000000-0000-0000-0000-000000000000', name: model.name, pciBusId: null };
  return { model, channel: new SimulatedChannel(new SimulatedProbe(new SimulatedDevice(model, new Prng(seed)), identity)) };
}

/** One sweep at two placements: the size list as is, then reversed (every array allocated elsewhere), as l1.ts measures. */
async function twoPlacements(channel: SimulatedChannel, sizes: number[]): Promise<RawSeries[]> {
  const raw: RawSeries[] = [];
  for (const arrayBytesList of [sizes, [...sizes].reverse()]) {
    const args = {
      space: 'global.ca' as const,
      arrayBytesList,
      strideBytes: 128,
      pattern: 'sequential' as const,
      warmup: true,
      samples: 2048,
    };
    raw.push({ name: SERIES, op: 'pchase.batch', args, result: await channel.request('pchase.batch', args) });
  }
  return raw;
}

function lastBelow(result: ChangePointResult): number {
  expect(result.found).toBe(true);
  return result.found ? result.lastBelowBytes : Number.NaN;
}

describe('L1 size with placement-dependent conflict misses (simulated H100)', () => {
  it.each([1, 2, 3, 4])(
    'keeps the placement with fewer misses and finds the true size where one placement under-reads (seed %i)',
    async (seed) => {
      const { model, channel } = conflictingL1(seed);
      const truth = l1Truth(model);
      const sizes = linearSizes(truth * 0.5, truth * 1.5, 48, 128);
      const gridStep = sizes[1]! - sizes[0]!;
      const raw = await twoPlacements(channel, sizes);

      const single = raw.map((series) => lastBelow(detectSizeChangePoint(sweepPoints([series], SERIES))));
      expect(Math.min(...single)).toBeLessThan(truth - 2 * gridStep);
      const both = lastBelow(detectSizeChangePoint(sweepPoints(raw, SERIES)));
      expect(both).toBeLessThanOrEqual(truth);
      expect(both).toBeGreaterThan(truth - gridStep);
    },
  );

  it('discovery measures each L1 size at two placements and stays near the true size', async () => {
    const { model, channel } = conflictingL1(1);
    const outcome = await discover(channel, { only: ['l1'] });
    const coarse = outcome.raw.filter((series) => series.name === 'l1.size.coarse');
    const lists = coarse.map((series) => (series.args as { arrayBytesList: number[] }).arrayBytesList);
    const timesMeasured = new Map<number, number>();
    for (const size of lists.flat()) timesMeasured.set(size, (timesMeasured.get(size) ?? 0) + 1);
    expect(new Set(timesMeasured.values())).toEqual(new Set([2]));
    expect(lists.some((list) => list[0]! > list.at(-1)!)).toBe(true);
    // Sizes a few KiB under the capacity thrash some sets at every placement with this hash (10–20 % slow
    // loads from 242 KiB on seed 1): the onset of misses, which discovery reports, lies ~2 % under the capacity.
    expect(Math.abs(outcome.elements.l1!.size!.value - l1Truth(model)) / l1Truth(model)).toBeLessThan(0.025);
  });
});
