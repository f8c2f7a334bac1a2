/**
 * detectSizeChangePoint against a straightforward reference of its walk
 * back and its final test (every pool built and sorted, the K-S statistic
 * in full at each step, as the analysis read before issue 17.6): the fast
 * walk must find the same change point and the same test, bit for bit, on
 * sweeps with ramps, outliers and pools thinned past MAX_POOL_SAMPLES.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  detectSizeChangePoint,
  ksTest,
  mean,
  median,
  slowThreshold,
  stepFitIndex,
  type SweepPoint,
} from '../../../server/analysis/index.js';
import { Prng } from '../../../server/gpu/sim/prng.js';

const MAX_POOL_SAMPLES = 16_384;

function referencePooled(points: readonly SweepPoint[], from: number, to: number): number[] {
  const chosen = points.slice(from, to);
  const total = chosen.reduce((sum, point) => sum + point.samples.length, 0);
  const step = Math.max(1, total / MAX_POOL_SAMPLES);
  const out: number[] = [];
  let next = 0;
  let offset = 0;
  for (const { samples } of chosen) {
    for (; next < offset + samples.length; next += step) out.push(samples[Math.floor(next) - offset]!);
    offset += samples.length;
  }
  return out;
}

/** The change point index and final test as the reference reads them (null: no step found before the walk). */
function reference(points: readonly SweepPoint[]) {
  const threshold = slowThreshold(points);
  const slowShares = points.map((point) => point.samples.filter((value) => value > threshold).length / point.samples.length);
  if (Math.max(...slowShares) - Math.min(...slowShares) < 0.2) return null;
  let index = stepFitIndex(slowShares);
  while (index > 1) {
    if (slowShares[index - 1]! - mean(slowShares.slice(0, index - 1)) < 0.05) break;
    if (!ksTest(referencePooled(points, 0, index - 1), points[index - 1]!.samples, 0.001).differs) break;
    index -= 1;
  }
  const medians = points.map((point) => median(point.samples));
  return {
    index,
    slowShares,
    ks: ksTest(referencePooled(points, 0, index), referencePooled(points, index, points.length), 0.001),
    low: Math.min(...medians),
    high: Math.max(...medians),
  };
}

/** A size sweep whose misses ramp up past a capacity, with rare disturbances. */
function sweep(
  seed: number,
  pointCount: number,
  samplesPerPoint: number,
  capacityAt: number,
  rampPoints: number,
  missCycles: number,
): SweepPoint[] {
  const rng = new Prng(seed);
  return Array.from({ length: pointCount }, (_, i) => {
    const missShare = i < capacityAt ? 0 : Math.min(1, (i - capacityAt + 1) / (rampPoints + 1));
    return {
      sizeBytes: (i + 1) * 4096,
      samples: Array.from({ length: samplesPerPoint }, () => {
        const base = rng.next() < missShare ? missCycles : 33;
        const outlier = rng.next() < 0.003 ? rng.uniform(1000, 40_000) : 0;
        return Math.round(base + base * 0.03 * rng.gaussian() + outlier);
      }),
    };
  });
}

describe('detectSizeChangePoint against the reference walk', () => {
  it('finds the same change point and the same K-S test on ramped, noisy sweeps (pools thinned)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 12, max: 48 }),
        fc.constantFrom(256, 1024),
        fc.double({ min: 0.2, max: 0.8, noNaN: true }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 60, max: 600 }),
        (seed, pointCount, samplesPerPoint, capacityShare, rampPoints, missCycles) => {
          const points = sweep(seed, pointCount, samplesPerPoint, Math.floor(pointCount * capacityShare), rampPoints, missCycles);
          const expected = reference(points);
          const result = detectSizeChangePoint(points);
          expect(result.slowShares).toEqual(expected?.slowShares ?? result.slowShares);
          if (!expected || !expected.ks.differs) {
            expect(result.found).toBe(false);
            return;
          }
          expect(result.found).toBe(true);
          if (!result.found) return;
          expect({ index: result.index, ks: result.ks, low: result.lowMedianCycles, high: result.highMedianCycles }).toEqual({
            index: expected.index,
            ks: expected.ks,
            low: expected.low,
            high: expected.high,
          });
        },
      ),
      { numRuns: 40 },
    );
  });
});
