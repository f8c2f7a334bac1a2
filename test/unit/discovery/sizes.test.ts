import { describe, expect, it } from 'vitest';
import { alignDown, chunkSizes, geometricSizes, linearSizes } from '../../../server/discovery/sizes.js';

describe('sweep sizes', () => {
  it('spaces geometric sizes per octave, aligned and without repeats', () => {
    const sizes = geometricSizes(1024, 8192, 2, 32);
    expect(sizes[0]).toBe(1024);
    expect(sizes.at(-1)).toBe(8192);
    expect(sizes).toHaveLength(7);
    for (const size of sizes) expect(size % 32).toBe(0);
    expect(geometricSizes(64, 128, 64, 32)).toEqual([64, 96, 128]);
  });

  it('spaces linear sizes evenly', () => {
    expect(linearSizes(1000, 2000, 5, 10)).toEqual([1000, 1250, 1500, 1750, 2000]);
  });

  it('never aligns below one unit', () => {
    expect(alignDown(10, 32)).toBe(32);
    expect(alignDown(100, 32)).toBe(96);
  });

  it('chunks launches by count and total bytes', () => {
    expect(chunkSizes([1, 2, 3, 4, 5], 2, 100)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunkSizes([40, 40, 40, 200, 10], 10, 100)).toEqual([[40, 40], [40], [200], [10]]);
  });
});
