import { sortedCopy } from './descriptive.js';

/**
 * Two-sample Kolmogorov–Smirnov test (thesis §3.3.4; MT4G §IV-B): do two
 * latency samples come from the same distribution?
 */

/** D = max |F(x) − G(x)| over the two empirical CDFs. */
export function ksStatistic(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length === 0 || b.length === 0) throw new RangeError('ksStatistic needs two non-empty samples');
  return ksStatisticOfSorted(sortedCopy(a), sortedCopy(b));
}

/** ksStatistic of two samples already sorted ascending (non-empty). */
function ksStatisticOfSorted(x: ArrayLike<number>, y: ArrayLike<number>): number {
  let i = 0;
  let j = 0;
  let d = 0;
  while (i < x.length && j < y.length) {
    // Step over every copy of the smaller value in both samples: ties move both CDFs at once.
    const value = Math.min(x[i]!, y[j]!);
    while (i < x.length && x[i] === value) i += 1;
    while (j < y.length && y[j] === value) j += 1;
    d = Math.max(d, Math.abs(i / x.length - j / y.length));
  }
  return d;
}

/**
 * A lower bound on ksStatistic(a, b) read at one value t, given how many of
 * a's values lie at or below t: |F_a(t) − F_b(t)| when that is one of the
 * gaps D is the largest of (some sample value at or below t, and values
 * above t in both samples), else 0. Computed exactly as ksStatistic computes
 * that gap, so a bound above the critical value answers `differs` as ksTest
 * would, without sorting `a`. `sortedB` ascending.
 */
export function ksGapAt(aAtMostT: number, aLength: number, sortedB: ArrayLike<number>, t: number): number {
  const i = aAtMostT;
  let j = 0;
  let above = sortedB.length;
  while (j < above) {
    const mid = (j + above) >>> 1;
    if (sortedB[mid]! <= t) j = mid + 1;
    else above = mid;
  }
  if (i + j === 0 || i >= aLength || j >= sortedB.length) return 0;
  return Math.abs(i / aLength - j / sortedB.length);
}

/** The D above which H0 (same distribution) is rejected at level alpha (large-sample approximation). */
export function ksCriticalValue(n: number, m: number, alpha = 0.001): number {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
  return Math.sqrt(-0.5 * Math.log(alpha / 2) * ((n + m) / (n * m)));
}

/**
 * Asymptotic p-value of D for sample sizes n and m: the Kolmogorov
 * distribution's tail Q(λ) = 2 Σ (−1)^(k−1) exp(−2k²λ²), with Stephens'
 * small-sample correction of λ.
 */
export function ksPValue(d: number, n: number, m: number): number {
  const effective = (n * m) / (n + m);
  const root = Math.sqrt(effective);
  const lambda = (root + 0.12 + 0.11 / root) * d;
  if (lambda < 0.2) return 1;
  let sum = 0;
  for (let k = 1; k <= 100; k += 1) {
    const term = Math.exp(-2 * k * k * lambda * lambda);
    sum += (k % 2 === 1 ? 1 : -1) * term;
    if (term < 1e-12) break;
  }
  return Math.min(1, Math.max(0, 2 * sum));
}

export interface KsTest {
  d: number;
  critical: number;
  pValue: number;
  /** D exceeds the critical value: the distributions differ. */
  differs: boolean;
}

export function ksTest(a: ArrayLike<number>, b: ArrayLike<number>, alpha = 0.001): KsTest {
  return testOf(ksStatistic(a, b), a.length, b.length, alpha);
}

/** ksTest of two samples already sorted ascending: a caller that sorted them once for other reasons sorts nothing again. */
export function ksTestOfSorted(a: ArrayLike<number>, b: ArrayLike<number>, alpha = 0.001): KsTest {
  if (a.length === 0 || b.length === 0) throw new RangeError('ksStatistic needs two non-empty samples');
  return testOf(ksStatisticOfSorted(a, b), a.length, b.length, alpha);
}

function testOf(d: number, n: number, m: number, alpha: number): KsTest {
  const critical = ksCriticalValue(n, m, alpha);
  return { d, critical, pValue: ksPValue(d, n, m), differs: d > critical };
}
