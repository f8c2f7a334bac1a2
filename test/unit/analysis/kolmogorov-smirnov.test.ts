import { describe, expect, it } from 'vitest';
import { ksCriticalValue, ksPValue, ksStatistic, ksTest } from '../../../server/analysis/index.js';

describe('two-sample Kolmogorov–Smirnov', () => {
  it('is 0 for identical samples and 1 for disjoint ones', () => {
    expect(ksStatistic([1, 2, 3], [3, 2, 1])).toBe(0);
    expect(ksStatistic([1, 2, 3], [10, 11])).toBe(1);
  });

  it('matches a hand-computed D, ties included', () => {
    // F steps at 1,2,2,3 (n=4), G at 2,3,4 (m=3): largest gap after x=2 is |3/4 − 1/3|.
    expect(ksStatistic([1, 2, 2, 3], [2, 3, 4])).toBeCloseTo(3 / 4 - 1 / 3);
  });

  it('computes the critical value of the large-sample approximation', () => {
    expect(ksCriticalValue(100, 100, 0.05)).toBeCloseTo(Math.sqrt(-0.5 * Math.log(0.025) * 0.02));
    expect(ksCriticalValue(1000, 1000)).toBeLessThan(ksCriticalValue(100, 100));
    expect(() => ksCriticalValue(10, 10, 0)).toThrow(RangeError);
  });

  it('gives a p-value that falls as D grows', () => {
    expect(ksPValue(0, 100, 100)).toBe(1);
    const small = ksPValue(0.1, 100, 100);
    const large = ksPValue(0.3, 100, 100);
    expect(large).toBeLessThan(small);
    expect(large).toBeLessThan(0.001);
    // λ = 1 (D chosen so) gives the Kolmogorov tail Q(1) ≈ 0.27.
    const ne = 50;
    const d = 1 / (Math.sqrt(ne) + 0.12 + 0.11 / Math.sqrt(ne));
    expect(ksPValue(d, 100, 100)).toBeCloseTo(0.27, 2);
  });

  it('rejects H0 for shifted samples only', () => {
    const a = Array.from({ length: 200 }, (_, i) => i % 20);
    const shifted = a.map((value) => value + 15);
    expect(ksTest(a, [...a].reverse()).differs).toBe(false);
    expect(ksTest(a, shifted).differs).toBe(true);
  });
});
