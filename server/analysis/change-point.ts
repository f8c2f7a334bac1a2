import { changePointConfidence } from './confidence.js';
import { mean, percentileOfSorted, sortedCopy } from './descriptive.js';
import { ksCriticalValue, ksGapAt, ksTest, ksTestOfSorted, type KsTest } from './kolmogorov-smirnov.js';

/**
 * Where in a size sweep does the latency distribution shift? (thesis §3.3,
 * MT4G §IV-B). Three steps:
 * 1. reduce each size's samples to one number, the share of loads slower
 *    than the smallest sizes normally are (slowThreshold): unlike
 *    MT4G's geometric mapping this ignores how far rare outliers stray, and a
 *    sweep crossing two levels (L1 → L2 → memory) still shows the first step;
 * 2. estimate one change point by the least-squares step fit ("Opt" with one
 *    change point, thesis Algorithm 1) over that series;
 * 3. walk back from it while the previous size still has more slow loads than
 *    the sizes before it and differs from them (two-sample K-S): on a gradual
 *    onset (part of the array still hits) the change point is where misses
 *    start, not the middle of the ramp.
 * The K-S test of all samples below against all above decides whether there
 * is a shift; how far the sizes above it miss more than any size below scores
 * it (on a real L1 the sizes just past the capacity miss on part of their
 * loads only, so the pooled K-S distance undersells a clean step: 0.43 on the
 * H100 where every size above the step missed more than every size below).
 */

const MAX_POOL_SAMPLES = 16_384;
/** The first 1/8 of the sizes (at least two) form the fast baseline. */
const BASELINE_SHARE_DIVISOR = 8;

export interface SweepPoint {
  sizeBytes: number;
  samples: readonly number[];
}

export interface ChangePointOptions {
  /** K-S significance level (default 0.001). */
  alpha?: number;
  /** Smallest rise of the share of slow loads across the sweep that counts as a step (default 0.2). */
  minShareStep?: number;
  /** A size before the step fit's change point joins the shifted side only when this many more of its loads are slow than before it (default 0.05). */
  minOnsetShare?: number;
}

export interface ChangePointFound {
  found: true;
  /** Index of the first shifted size. */
  index: number;
  /** Largest size still behaving like the smaller ones: the cache holds at least this. */
  lastBelowBytes: number;
  /** Smallest shifted size: the cache holds less than this. */
  firstAboveBytes: number;
  lowMedianCycles: number;
  highMedianCycles: number;
  ks: KsTest;
  consistency: number;
  edge: 'lower' | 'upper' | null;
  confidence: number;
  /** The reduced series (share of slow loads per size). */
  slowShares: number[];
}

export interface ChangePointMissing {
  found: false;
  reason: string;
  slowShares: number[];
}

export type ChangePointResult = ChangePointFound | ChangePointMissing;

export function detectSizeChangePoint(points: readonly SweepPoint[], options: ChangePointOptions = {}): ChangePointResult {
  const alpha = options.alpha ?? 0.001;
  const minShareStep = options.minShareStep ?? 0.2;
  const minOnsetShare = options.minOnsetShare ?? 0.05;
  if (points.length < 2) return { found: false, reason: 'fewer than two sizes', slowShares: [] };
  for (let i = 1; i < points.length; i += 1) {
    if (points[i]!.sizeBytes <= points[i - 1]!.sizeBytes) throw new RangeError('sweep sizes must be strictly increasing');
  }
  // Each size's samples sorted once: its median here, its K-S test in the walk back.
  const sortedSamples = points.map((point) => sortedCopy(point.samples));
  const medians = sortedSamples.map((sorted) => percentileOfSorted(sorted, 50));
  const low = Math.min(...medians);
  const high = Math.max(...medians);
  const threshold = slowThreshold(points);
  const slowShares = points.map((point) => countAbove(point.samples, threshold) / point.samples.length);
  const shareStep = Math.max(...slowShares) - Math.min(...slowShares);
  if (shareStep < minShareStep) {
    return { found: false, reason: `no latency step: the share of slow loads varies by ${shareStep.toFixed(2)} only`, slowShares };
  }

  let index = stepFitIndex(slowShares);
  while (index > 1) {
    // Both: K-S alone flags the slow drift of hit latency with size (TLB reach) at these sample counts.
    const risesBy = slowShares[index - 1]! - mean(slowShares.slice(0, index - 1));
    if (risesBy < minOnsetShare) break;
    if (!poolDiffers(points, index - 1, sortedSamples[index - 1]!, threshold, alpha)) break;
    index -= 1;
  }

  const ks = ksTest(pooled(points, 0, index), pooled(points, index, points.length), alpha);
  if (!ks.differs)
    return { found: false, reason: `no significant shift (K-S D ${ks.d.toFixed(3)} ≤ ${ks.critical.toFixed(3)})`, slowShares };

  const consistency = stepConsistency(slowShares, index);
  const edge = index <= 1 ? 'lower' : index >= points.length - 1 ? 'upper' : null;
  const lastBelowBytes = points[index - 1]!.sizeBytes;
  const firstAboveBytes = points[index]!.sizeBytes;
  const confidence = changePointConfidence({
    pValue: ks.pValue,
    separation: shareSeparation(slowShares, index),
    consistency,
    // A bracket one size step wide is as fine as the sweep's alignment allows: only what is wider counts against it.
    relativeResolution: Math.max(0, firstAboveBytes - lastBelowBytes - sizeStep(points)) / lastBelowBytes,
    atEdge: edge !== null,
  });
  return {
    found: true,
    index,
    lastBelowBytes,
    firstAboveBytes,
    lowMedianCycles: low,
    highMedianCycles: high,
    ks,
    consistency,
    edge,
    confidence,
    slowShares,
  };
}

/**
 * Slower than this is "slow": the 95th percentile of the smallest sizes (a
 * sweep starts below the change point) plus two interquartile ranges. The
 * 95th percentile sits above every regular mode of the baseline (real L1 hits
 * come at two latencies, A100 L2 hits at near and far ones) and below the
 * rare disturbances.
 */
export function slowThreshold(points: readonly SweepPoint[]): number {
  const baseline = sortedCopy(pooled(points, 0, baselinePointCount(points.length)));
  const iqr = percentileOfSorted(baseline, 75) - percentileOfSorted(baseline, 25);
  return percentileOfSorted(baseline, 95) + 2 * Math.max(1, iqr);
}

/** How many of a sweep's smallest sizes slowThreshold reads: the first 1/8 (at least two). */
export function baselinePointCount(pointCount: number): number {
  return Math.max(2, Math.ceil(pointCount / BASELINE_SHARE_DIVISOR));
}

/**
 * The samples of points [from, to), thinned evenly to at most MAX_POOL_SAMPLES:
 * K-S needs no more to see a shift, and sorting a whole sweep would hold the
 * daemon's event loop for too long.
 */
function pooled(points: readonly SweepPoint[], from: number, to: number): Float64Array {
  const end = Math.min(to, points.length);
  let total = 0;
  for (let i = from; i < end; i += 1) total += points[i]!.samples.length;
  const step = poolStep(points, from, end);
  // One more than total / step, and a little room: `next` is summed step by step, as it always was (the samples chosen stay the same).
  let out: Float64Array = new Float64Array(Math.min(total, Math.ceil(total / step) + 2));
  let count = 0;
  let next = 0;
  let offset = 0;
  for (let i = from; i < end; i += 1) {
    const samples = points[i]!.samples;
    const pointEnd = offset + samples.length;
    for (; next < pointEnd; next += step) {
      if (count === out.length) out = grown(out);
      out[count++] = samples[Math.floor(next) - offset]!;
    }
    offset = pointEnd;
  }
  return out.subarray(0, count);
}

/** Every step-th sample (fractional steps, summed) of points [from, end): at most MAX_POOL_SAMPLES. */
function poolStep(points: readonly SweepPoint[], from: number, end: number): number {
  let total = 0;
  for (let i = from; i < end; i += 1) total += points[i]!.samples.length;
  return Math.max(1, total / MAX_POOL_SAMPLES);
}

function grown(values: Float64Array): Float64Array {
  const bigger = new Float64Array(values.length * 2 + 16);
  bigger.set(values);
  return bigger;
}

function countAbove(values: readonly number[], threshold: number): number {
  let above = 0;
  for (const value of values) if (value > threshold) above += 1;
  return above;
}

/**
 * ksTest(pooled(points, 0, to), size, alpha).differs, exactly. A size past
 * the capacity has more loads above the slow threshold than the sizes
 * before it: the gap of the two CDFs there alone is often past the critical
 * value (D is at least it), read from a count over the pool without building
 * or sorting it; otherwise the full test decides.
 */
function poolDiffers(points: readonly SweepPoint[], to: number, sortedSize: Float64Array, threshold: number, alpha: number): boolean {
  const pool = pooledCountAtMost(points, to, threshold);
  if (
    pool.count > 0 &&
    pool.atMost >= 0 &&
    ksGapAt(pool.atMost, pool.count, sortedSize, threshold) > ksCriticalValue(pool.count, sortedSize.length, alpha)
  )
    return true;
  return ksTestOfSorted(sortedCopy(pooled(points, 0, to)), sortedSize, alpha).differs;
}

/** How many samples pooled(points, 0, to) holds, and how many of them are at or below t (atMost −1: a NaN among them); pooled's walk, counting. */
function pooledCountAtMost(points: readonly SweepPoint[], to: number, t: number): { count: number; atMost: number } {
  const end = Math.min(to, points.length);
  const step = poolStep(points, 0, end);
  let count = 0;
  let atMost = 0;
  let next = 0;
  let offset = 0;
  for (let i = 0; i < end; i += 1) {
    const samples = points[i]!.samples;
    const pointEnd = offset + samples.length;
    for (; next < pointEnd; next += step) {
      const value = samples[Math.floor(next) - offset]!;
      count += 1;
      if (value <= t) atMost += 1;
      else if (!(value > t)) return { count, atMost: -1 };
    }
    offset = pointEnd;
  }
  return { count, atMost };
}

/** argmin over t of the squared error of a two-level step with the jump before index t. */
export function stepFitIndex(series: readonly number[]): number {
  const n = series.length;
  const prefix = [0];
  const prefixSquares = [0];
  for (const value of series) {
    prefix.push(prefix.at(-1)! + value);
    prefixSquares.push(prefixSquares.at(-1)! + value * value);
  }
  const cost = (from: number, to: number) => {
    const sum = prefix[to]! - prefix[from]!;
    return prefixSquares[to]! - prefixSquares[from]! - (sum * sum) / (to - from);
  };
  let best = 1;
  let bestCost = Infinity;
  for (let t = 1; t < n; t += 1) {
    const total = cost(0, t) + cost(t, n);
    if (total < bestCost - 1e-12) {
      bestCost = total;
      best = t;
    }
  }
  return best;
}

/** The alignment every size of the sweep shares (their greatest common divisor). */
function sizeStep(points: readonly SweepPoint[]): number {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  return points.reduce((step, point) => gcd(point.sizeBytes, step), 0);
}

/** Slow share the sizes from `index` on reach, above the most any size before it showed: 1 for a full, clean step. */
function shareSeparation(slowShares: readonly number[], index: number): number {
  return Math.max(0, Math.max(...slowShares.slice(index)) - Math.max(...slowShares.slice(0, index)));
}

/** Share of points that do not contradict a rising step at `index`: none before it above its onset, none after it back at the baseline. */
function stepConsistency(slowShares: readonly number[], index: number): number {
  const onset = slowShares[index]!;
  const baselineTop = Math.max(...slowShares.slice(0, index));
  let contradicting = 0;
  slowShares.forEach((share, i) => {
    if (i < index ? share >= onset : share <= baselineTop) contradicting += 1;
  });
  return 1 - contradicting / slowShares.length;
}
