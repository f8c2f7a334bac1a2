import { describe, expect, it } from 'vitest';
import { detectLineSize, largestPowerOfTwoAtMost, lineSizeStrides, type LineSizePoint } from '../../../server/analysis/index.js';

const HIT = 40;
const MISS = 300;
const THRESHOLD = 100;

/**
 * An LRU cache of `capacityBytes` in `lineBytes` lines walked warm at
 * `strideBytes` over `sizeBytes`: the walk thrashes when it touches more
 * lines than the cache holds, and hits on every load otherwise.
 */
function walk(sizeBytes: number, strideBytes: number, capacityBytes: number, lineBytes: number): LineSizePoint {
  const touchedLines = Math.ceil(sizeBytes / Math.max(strideBytes, lineBytes));
  const fits = touchedLines <= capacityBytes / lineBytes;
  return { sizeBytes, strideBytes, samples: Array(128).fill(fits ? HIT : MISS) };
}

function sweep(capacityBytes: number, lineBytes: number, fetchBytes: number): LineSizePoint[] {
  const sizes = [1, 2, 3, 4].map((k) => Math.floor((capacityBytes * (1 + k / 16)) / 4) * 4);
  return sizes.flatMap((size) => lineSizeStrides(fetchBytes, 512).map((stride) => walk(size, stride, capacityBytes, lineBytes)));
}

describe('detectLineSize', () => {
  it.each([
    [240 * 1024, 128, 32],
    [2048, 64, 64],
    [25 * 1024 * 1024, 128, 32],
  ])('finds the line of a %i B cache with %i B lines', (capacity, line, fetch) => {
    const result = detectLineSize(sweep(capacity, line, fetch), THRESHOLD);
    expect(result).toMatchObject({ found: true, lineBytes: line, confidence: 1 });
  });

  it('gives no answer when no size thrashes at the smallest stride (the arrays fit)', () => {
    const fitting = lineSizeStrides(32, 512).map((strideBytes) => ({ sizeBytes: 1000, strideBytes, samples: Array(64).fill(HIT) }));
    expect(detectLineSize(fitting, THRESHOLD)).toMatchObject({ found: false });
  });

  it('lowers its confidence when the sizes disagree', () => {
    const points = sweep(240 * 1024, 128, 32);
    const largest = Math.max(...points.map((p) => p.sizeBytes));
    const noisy = points.map((p) => (p.sizeBytes === largest ? { ...p, samples: Array(128).fill(MISS) } : p));
    const result = detectLineSize(noisy, THRESHOLD);
    expect(result).toMatchObject({ found: true, lineBytes: 128, confidence: 0.75 });
  });

  it('keeps strides off the powers of two above the first', () => {
    expect(lineSizeStrides(32, 256)).toEqual([32, 36, 48, 72, 96, 144, 192]);
    expect(largestPowerOfTwoAtMost(191)).toBe(128);
  });
});
