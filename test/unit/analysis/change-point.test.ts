import { describe, expect, it } from 'vitest';
import { detectSizeChangePoint, stepFitIndex, type SweepPoint } from '../../../server/analysis/index.js';
import { Prng } from '../../../server/gpu/sim/prng.js';

interface SyntheticSweep {
  sizes: number[];
  capacityBytes: number;
  /** Bytes past the capacity over which the share of misses grows from 0 to 1 (0: a sharp step). */
  rampBytes: number;
  hitCycles: number;
  missCycles: number;
  outlierProbability: number;
  seed: number;
}

function sweep(spec: SyntheticSweep, samples = 512): SweepPoint[] {
  const rng = new Prng(spec.seed);
  return spec.sizes.map((sizeBytes) => {
    const over = sizeBytes - spec.capacityBytes;
    const missShare = over <= 0 ? 0 : spec.rampBytes === 0 ? 1 : Math.min(1, over / spec.rampBytes);
    return {
      sizeBytes,
      samples: Array.from({ length: samples }, () => {
        const base = rng.next() < missShare ? spec.missCycles : spec.hitCycles;
        const outlier = rng.next() < spec.outlierProbability ? rng.uniform(500, 2000) : 0;
        return Math.round(base + base * 0.02 * rng.gaussian() + outlier);
      }),
    };
  });
}

const KIB = 1024;
const sizes = Array.from({ length: 40 }, (_, i) => (i + 1) * KIB);
const base: SyntheticSweep = {
  sizes,
  capacityBytes: 24.5 * KIB,
  rampBytes: 0,
  hitCycles: 40,
  missCycles: 210,
  outlierProbability: 0.005,
  seed: 1,
};

describe('detectSizeChangePoint', () => {
  it('finds a sharp step between the last fitting and the first missing size', () => {
    const result = detectSizeChangePoint(sweep(base));
    expect(result.found).toBe(true);
    if (!result.found) return;
    expect(result.lastBelowBytes).toBe(24 * KIB);
    expect(result.firstAboveBytes).toBe(25 * KIB);
    expect(result.edge).toBeNull();
    expect(result.ks.differs).toBe(true);
    expect(result.confidence).toBeGreaterThan(0.5);
  });

  it('puts the change point at the onset of a gradual ramp, not its middle', () => {
    const result = detectSizeChangePoint(sweep({ ...base, rampBytes: 8 * KIB, seed: 2 }));
    expect(result.found).toBe(true);
    if (!result.found) return;
    expect(result.firstAboveBytes).toBeGreaterThanOrEqual(25 * KIB);
    expect(result.firstAboveBytes).toBeLessThanOrEqual(26 * KIB);
  });

  it('is not moved by heavy outliers', () => {
    const result = detectSizeChangePoint(sweep({ ...base, outlierProbability: 0.03, seed: 3 }));
    expect(result.found && result.lastBelowBytes).toBe(24 * KIB);
  });

  it('reports no change point in a flat sweep, however noisy', () => {
    const result = detectSizeChangePoint(sweep({ ...base, capacityBytes: 100 * KIB, outlierProbability: 0.02, seed: 4 }));
    expect(result.found).toBe(false);
    if (!result.found) expect(result.reason).toMatch(/no latency step|no significant shift/);
  });

  it('flags a step at the upper edge of the sweep', () => {
    const result = detectSizeChangePoint(sweep({ ...base, capacityBytes: 39.5 * KIB, seed: 5 }));
    expect(result.found && result.edge).toBe('upper');
  });

  it('finds the first of two steps (L1 → L2 → memory) when later sizes climb further', () => {
    const points = sweep(base).map((point) =>
      point.sizeBytes > 34 * KIB ? { ...point, samples: point.samples.map((value) => value + 400) } : point,
    );
    const result = detectSizeChangePoint(points);
    expect(result.found && result.lastBelowBytes).toBe(24 * KIB);
  });

  it('insists on increasing sizes', () => {
    const points = sweep(base);
    expect(() => detectSizeChangePoint([points[1]!, points[0]!])).toThrow(RangeError);
    expect(detectSizeChangePoint(points.slice(0, 1)).found).toBe(false);
  });
});

describe('stepFitIndex', () => {
  it('places the least-squares step where the level changes', () => {
    expect(stepFitIndex([0, 0, 0, 0, 1, 1, 1])).toBe(4);
    expect(stepFitIndex([0, 0.01, 0, 0.9, 1, 1, 0.98, 1])).toBe(3);
  });
});
