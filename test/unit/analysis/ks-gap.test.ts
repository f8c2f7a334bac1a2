import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ksGapAt, ksStatistic, ksTest, ksTestOfSorted } from '../../../server/analysis/kolmogorov-smirnov.js';

const sorted = (values: readonly number[]) => Float64Array.from(values).sort();
const atMost = (values: readonly number[], t: number) => values.filter((value) => value <= t).length;
/** Latency-like samples: small integers with ties, now and then a far outlier. */
const samples = fc.array(
  fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 20, max: 60 }) }, { weight: 1, arbitrary: fc.integer({ min: 61, max: 50_000 }) }),
  { minLength: 1, maxLength: 200 },
);

describe('ksGapAt: a lower bound on D at one value', () => {
  it('never exceeds the K-S statistic, and is the CDFs’ gap at t wherever both samples go on above t', () => {
    fc.assert(
      fc.property(samples, samples, fc.integer({ min: 15, max: 70 }), (a, b, t) => {
        const gap = ksGapAt(atMost(a, t), a.length, sorted(b), t);
        expect(gap).toBeLessThanOrEqual(ksStatistic(a, b));
        const i = atMost(a, t);
        const j = atMost(b, t);
        if (i + j > 0 && i < a.length && j < b.length) expect(gap).toBe(Math.abs(i / a.length - j / b.length));
        else expect(gap).toBe(0);
      }),
    );
  });

  it('equals D where the CDFs are furthest apart (a step between the two samples)', () => {
    const fast = [30, 30, 31, 32, 30, 31, 400];
    const slow = [30, 31, 300, 310, 320, 330, 500];
    const d = ksStatistic(fast, slow);
    expect(ksGapAt(atMost(fast, 40), fast.length, sorted(slow), 40)).toBe(d);
  });

  it('leaves ksTestOfSorted the same test as ksTest', () => {
    fc.assert(
      fc.property(samples, samples, (a, b) => {
        expect(ksTestOfSorted(sorted(a), sorted(b))).toEqual(ksTest(a, b));
      }),
    );
  });
});
