/**
 * Descriptive statistics over plain number arrays. Empty input is an
 * argument error: a statistic of nothing has no value to report.
 */
import { ERROR_CODES } from '../errors.js';
import { sortedNumbers } from './sort-numbers.js';

export class EmptySampleError extends RangeError {
  readonly code = ERROR_CODES.EMPTY_SAMPLE;

  constructor(what: string) {
    super(`${what} needs at least one value`);
    this.name = 'EmptySampleError';
  }
}

function requireValues(values: ArrayLike<number>, what: string): void {
  if (values.length === 0) throw new EmptySampleError(what);
}

/** A sorted copy as a typed array, numeric (Array#sort would compare strings); integer samples are sorted by counting (sort-numbers.ts). */
export function sortedCopy(values: ArrayLike<number>): Float64Array {
  return sortedNumbers(values);
}

export function sortedAscending(values: readonly number[]): number[] {
  return Array.from(sortedCopy(values));
}

export function mean(values: ArrayLike<number>): number {
  requireValues(values, 'mean');
  return sumOf(values) / values.length;
}

/** In order, first to last. (The loops sit in functions of their own: V8 compiles a long loop while it runs, before the code after it has run once.) */
function sumOf(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i += 1) sum += values[i]!;
  return sum;
}

/** Sample standard deviation (n − 1); 0 for a single value. */
export function stdev(values: ArrayLike<number>): number {
  requireValues(values, 'stdev');
  if (values.length === 1) return 0;
  return Math.sqrt(squaresAbout(values, mean(values)) / (values.length - 1));
}

function squaresAbout(values: ArrayLike<number>, centre: number): number {
  let squares = 0;
  for (let i = 0; i < values.length; i += 1) squares += (values[i]! - centre) ** 2;
  return squares;
}

/**
 * The p-th percentile (0..100) of already sorted values, interpolating
 * linearly between closest ranks (Hyndman–Fan type 7, as numpy's default).
 */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  requireValues(sorted, 'percentile');
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be in [0, 100], got ${p}`);
  const rank = (p / 100) * (sorted.length - 1);
  const below = Math.floor(rank);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below]! + (rank - below) * (sorted[above]! - sorted[below]!);
}

export function percentile(values: readonly number[], p: number): number {
  return percentileOfSorted(sortedCopy(values), p);
}

/** The middle value, or the mean of the two middle values for an even count. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}
