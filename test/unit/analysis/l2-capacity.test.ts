import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { fitL2Capacity, isotonicFit, type CapacityPoint } from '../../../server/analysis/l2-capacity.js';
import { buildL2 } from '../../../server/discovery/strategies/l2.js';
import { buildL2Partitions, partitionAmount } from '../../../server/discovery/strategies/l2-structure.js';
import { recordedSearch } from '../../../server/discovery/sweep-series.js';
import type { HelloResult } from '../../../server/protocol/ops.js';
import type { RawSeries } from '../../../server/model/document.js';
import { Prng } from '../../../server/gpu/sim/prng.js';

const MIB = 1024 * 1024;
const HIT = 290;
const MISS = 600;

/** A sweep whose sets overflow at sizes spread evenly (line-weighted) over [low, high]: its capacity is their mean. */
function overflowSweep(low: number, high: number, rng: Prng): CapacityPoint[] {
  const sizes = [8, 12, 16, 20, 22, 23, 24, 24.5, 25, 25.5, 26, 27, 28, 32, 40].map((mib) => mib * MIB);
  return sizes.map((sizeBytes) => {
    const m = Math.min(1, Math.max(0, (sizeBytes - low) / (high - low)));
    const samples = Array.from({ length: 512 }, (_, i) => (i / 512 < m ? MISS : HIT) + Math.round(8 * rng.gaussian()));
    return { sizeBytes, samples };
  });
}

describe('isotonicFit', () => {
  it('is the least-squares non-decreasing fit', () => {
    for (const [i, value] of isotonicFit([0, 0.4, 0.2, 0.9, 1]).entries()) expect(value).toBeCloseTo([0, 0.3, 0.3, 0.9, 1][i]!, 12);
    expect(isotonicFit([1, 0])).toEqual([0.5, 0.5]);
  });
});

describe('fitL2Capacity', () => {
  it('finds the mean overflow size of a set-overflow ramp, above its onset', () => {
    const points = overflowSweep(24 * MIB, 26 * MIB, new Prng(1));
    const fit = fitL2Capacity(points, 24 * MIB);
    expect(fit.found).toBe(true);
    if (!fit.found) return;
    expect(fit.model).toBe('set-overflow');
    expect(Math.abs(fit.capacityBytes - 25 * MIB) / (25 * MIB)).toBeLessThan(0.01);
    expect(fit.confidence).toBeGreaterThan(0.9);
  });

  it('reads random replacement (1 − C/S, never all misses) as such', () => {
    const capacity = 20 * MIB;
    const rng = new Prng(2);
    const points = [8, 12, 16, 18, 20, 22, 25, 30, 40, 60].map((mib) => {
      const m = Math.max(0, 1 - capacity / (mib * MIB));
      return { sizeBytes: mib * MIB, samples: Array.from({ length: 1024 }, () => (rng.next() < m ? MISS : HIT)) };
    });
    const fit = fitL2Capacity(points, 20 * MIB);
    expect(fit.found && fit.model).toBe('random');
    if (fit.found) expect(Math.abs(fit.capacityBytes - capacity) / capacity).toBeLessThan(0.03);
  });

  it('gives up without sizes past the onset', () => {
    const points = overflowSweep(24 * MIB, 26 * MIB, new Prng(3)).filter((point) => point.sizeBytes < 20 * MIB);
    expect(fitL2Capacity(points, 24 * MIB).found).toBe(false);
  });
});

interface Run {
  run: number;
  raw: RawSeries[];
}
const runs = (
  JSON.parse(gunzipSync(readFileSync(new URL('../../fixtures/h100/discovery-ii-3-runs.json.gz', import.meta.url))).toString()) as {
    runs: Run[];
  }
).runs;

describe.each(runs.map((run) => [run.run, run] as const))('the recorded H100 sweep, run %i', (_, run) => {
  const device = (run.raw.find((series) => series.op === 'hello')!.result as HelloResult).devices[0]!;

  it('fits one partition between 40 % and 60 % of the API L2, above the onset of misses', () => {
    const search = recordedSearch(run.raw, 'l2.size')!;
    expect(search.result.found).toBe(true);
    if (!search.result.found) return;
    const fit = fitL2Capacity(search.points, search.result.lastBelowBytes);
    expect(fit.found).toBe(true);
    if (!fit.found) return;
    expect(fit.model).toBe('set-overflow');
    expect(fit.capacityBytes).toBeGreaterThan(search.result.lastBelowBytes);
    expect(fit.capacityBytes).toBeGreaterThan(0.4 * device.l2CacheSizeBytes);
    expect(fit.capacityBytes).toBeLessThan(0.6 * device.l2CacheSizeBytes);
    // Far-partition hits (~465 cycles) count as leaving the near partition: the threshold lies below them.
    expect(fit.missThresholdCycles).toBeLessThan(440);
    expect(fit.confidence).toBeGreaterThan(0.7);
  });

  it('sets the segment size from the fit, the onset in its note; the amount from the measured partition count, agreeing with the API division', () => {
    const built = buildL2(run.raw, device, null);
    const segment = built.l2!.segmentSize!;
    expect(segment.source).toBe('microbenchmark');
    expect(segment.note).toMatch(/onset/);
    expect(segment.value).toBeGreaterThan(0.4 * device.l2CacheSizeBytes);
    const { partitions } = buildL2Partitions(run.raw, null);
    const amount = partitionAmount(partitions!, run.raw, device);
    expect(amount.value).toMatchObject({ value: 2, source: 'microbenchmark', per: 'gpu' });
    expect(amount.warnings).toEqual([]);
  });
});
