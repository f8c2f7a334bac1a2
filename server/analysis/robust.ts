import { mean, median, percentileOfSorted, sortedAscending, sortedCopy, stdev } from './descriptive.js';
import { float64Copy } from './samples.js';

/**
 * Outlier-robust reductions. Latency samples carry rare, large disturbances
 * (interrupts, DRAM refresh, other traffic: hundreds to thousands of cycles)
 * that must not move a reported mean.
 */

/** Median absolute deviation, scaled to estimate σ for normal data. */
export function mad(values: readonly number[]): number {
  const centre = median(values);
  return 1.4826 * median(values.map((value) => Math.abs(value - centre)));
}

/** Keeps values within `k` scaled MADs of the median (all of them when the MAD is 0 and they equal the median). */
export function dropOutliersMad(values: readonly number[], k = 5): number[] {
  const centre = median(values);
  const spread = mad(values);
  return values.filter((value) => Math.abs(value - centre) <= k * spread);
}

/**
 * Tukey's fences: keeps values within `k` interquartile ranges outside the
 * quartiles. The range is at least `minIqr`: integer cycle counts of a quiet
 * cache often have an IQR of 0, which would drop every value off the median.
 */
export function dropOutliersIqr(values: readonly number[], k = 3, minIqr = 1): number[] {
  const fences = iqrFences(sortedCopy(values), k, minIqr);
  return values.filter((value) => value >= fences.low && value <= fences.high);
}

/** The first index in [from, to) whose value satisfies a predicate that holds from some index on (`to` when none does). */
function firstIndex(sorted: Float64Array, from: number, to: number, holds: (value: number) => boolean): number {
  let low = from;
  let high = to;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (holds(sorted[mid]!)) high = mid;
    else low = mid + 1;
  }
  return low;
}

function iqrFences(sorted: Float64Array, k: number, minIqr: number): { low: number; high: number } {
  const q1 = percentileOfSorted(sorted, 25);
  const q3 = percentileOfSorted(sorted, 75);
  const iqr = Math.max(minIqr, q3 - q1);
  return { low: q1 - k * iqr, high: q3 + k * iqr };
}

/** Mean of the values left after cutting `fraction` off each end. */
export function trimmedMean(values: readonly number[], fraction = 0.05): number {
  if (!(fraction >= 0 && fraction < 0.5)) throw new RangeError(`trim fraction must be in [0, 0.5), got ${fraction}`);
  const sorted = sortedAscending(values);
  const cut = Math.floor(sorted.length * fraction);
  return mean(sorted.slice(cut, sorted.length - cut));
}

export interface LatencySummary {
  mean: number;
  p50: number;
  p95: number;
  stdev: number;
  /** Samples kept after outlier removal. */
  sampleCount: number;
  droppedCount: number;
}

/**
 * Summary of one latency population after Tukey's fences (k = 3): wide enough
 * to keep a bimodal near/far L2 population whole, narrow enough to drop the
 * rare disturbances.
 */
export function summarizeLatency(values: readonly number[], offsetCycles = 0): LatencySummary {
  const sortedValues = sortedCopy(values);
  const { low, high } = iqrFences(sortedValues, 3, 1);
  // The kept values are a run of the sorted ones (the fences cut off each end; NaN, last, is above any fence); less the offset they stay in order.
  const to = firstIndex(sortedValues, 0, sortedValues.length, (value) => !(value <= high));
  const from = firstIndex(sortedValues, 0, to, (value) => value >= low);
  const sorted = shifted(sortedValues.subarray(from, to), offsetCycles);
  // The mean and stdev sum in recorded order, as they always did.
  const kept = keptShifted(float64Copy(values), low, high, offsetCycles, sorted.length);
  return {
    mean: mean(kept),
    p50: percentileOfSorted(sorted, 50),
    p95: percentileOfSorted(sorted, 95),
    stdev: stdev(kept),
    sampleCount: kept.length,
    droppedCount: values.length - kept.length,
  };
}

/** The values less the offset. */
function shifted(values: Float64Array, offset: number): Float64Array {
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i += 1) out[i] = values[i]! - offset;
  return out;
}

/** The `count` values within [low, high], in order, less the offset. */
function keptShifted(values: Float64Array, low: number, high: number, offset: number, count: number): Float64Array {
  const out = new Float64Array(count);
  let at = 0;
  for (let i = 0; i < values.length; i += 1) {
    const value = values[i]!;
    if (value >= low && value <= high) out[at++] = value - offset;
  }
  return out;
}
