/**
 * Numeric ascending sort into a new Float64Array. Latency samples are
 * integer cycle counts within a few tens of thousands of each other: int32
 * values are sorted by counting (one pass for a range below 2^11, two 11-bit
 * LSD radix passes over value − min below 2^22), an order of magnitude
 * faster than Float64Array#sort (a comparison sort in V8, about 70 ns per
 * value). Anything else (fractions, NaN, −0, wider ranges, short arrays)
 * falls back to Float64Array#sort. Both give the same values in the same
 * order: for integers the sorted sequence is unique.
 *
 * The input is first copied into the output array (samples.ts, float64Copy),
 * which is then sorted in place.
 */
import { float64Copy } from './samples.js';

const DIGIT_BITS = 11;
const DIGIT_VALUES = 1 << DIGIT_BITS;
const DIGIT_MASK = DIGIT_VALUES - 1;
/** Two digits: integer ranges below 2^22 are counted, wider ones compared. */
const MAX_COUNTED_RANGE = DIGIT_VALUES * DIGIT_VALUES;
/** Below this many values the comparison sort is as fast. */
const MIN_COUNTED_LENGTH = 64;

export function sortedNumbers(values: ArrayLike<number>): Float64Array {
  const out = float64Copy(values);
  const range = out.length >= MIN_COUNTED_LENGTH ? integerRange(out) : null;
  if (range === null || range.max - range.min >= MAX_COUNTED_RANGE) return out.sort();
  if (range.max - range.min < DIGIT_VALUES) countingSort(out, range.min, range.max - range.min + 1);
  else radixSort(out, range.min);
  return out;
}

/** The smallest and largest value when every value is an int32 other than −0 (its place before +0 is Float64Array#sort's to keep); null otherwise. */
function integerRange(values: Float64Array): { min: number; max: number } | null {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < values.length; i += 1) {
    const value = values[i]!;
    // NaN, ±Infinity, fractions and values past the int32 range fail the first test.
    if ((value | 0) !== value || (value === 0 && 1 / value < 0)) return null;
    if (value < min) min = value;
    if (value > max) max = value;
  }
  return { min, max };
}

/** In place, one pass: how many of each value, written back in order. */
function countingSort(values: Float64Array, min: number, range: number): void {
  const counts = new Uint32Array(range);
  for (let i = 0; i < values.length; i += 1) counts[values[i]! - min]! += 1;
  let at = 0;
  for (let key = 0; key < range; key += 1) {
    const end = at + counts[key]!;
    if (end > at) values.fill(key + min, at, end);
    at = end;
  }
}

/** In place: two stable counting passes, low digit then high digit, over the keys value − min (< 2^22). */
function radixSort(values: Float64Array, min: number): void {
  const keys = keysOf(values, min);
  const byLow = new Uint32Array(keys.length);
  scatter(keys, byLow, starts(keys, 0), 0);
  const byHigh = new Uint32Array(keys.length);
  scatter(byLow, byHigh, starts(keys, DIGIT_BITS), DIGIT_BITS);
  for (let i = 0; i < byHigh.length; i += 1) values[i] = byHigh[i]! + min;
}

function keysOf(values: Float64Array, min: number): Uint32Array {
  const keys = new Uint32Array(values.length);
  for (let i = 0; i < values.length; i += 1) keys[i] = values[i]! - min;
  return keys;
}

/** Each digit's first index in the output (exclusive prefix sums of the digit's counts), for the digit at `shift`. */
function starts(keys: Uint32Array, shift: number): Uint32Array {
  const counts = new Uint32Array(DIGIT_VALUES);
  for (let i = 0; i < keys.length; i += 1) counts[(keys[i]! >>> shift) & DIGIT_MASK]! += 1;
  let start = 0;
  for (let digit = 0; digit < DIGIT_VALUES; digit += 1) {
    const count = counts[digit]!;
    counts[digit] = start;
    start += count;
  }
  return counts;
}

/** Stable: keys in `from` order, to their digit's next place in `to`. */
function scatter(from: Uint32Array, to: Uint32Array, next: Uint32Array, shift: number): void {
  for (let i = 0; i < from.length; i += 1) {
    const key = from[i]!;
    to[next[(key >>> shift) & DIGIT_MASK]!++] = key;
  }
}
