import { describe, expect, it } from 'vitest';
import { SetAssociativeCache } from '../../../server/gpu/sim/set-associative-cache.js';

const geometry = { sizeBytes: 1024, lineBytes: 128, sectorBytes: 32, ways: 2 }; // 4 sets × 2 ways

describe('SetAssociativeCache', () => {
  it('misses once per sector, then hits', () => {
    const cache = new SetAssociativeCache(geometry);
    expect(cache.access(0)).toBe(false);
    expect(cache.access(4)).toBe(true); // same sector
    expect(cache.access(32)).toBe(false); // next sector of a present line: a sector miss
    expect(cache.access(32)).toBe(true);
    expect(cache.contains(64)).toBe(false);
  });

  it('holds exactly its capacity of lines on a sequential walk', () => {
    const cache = new SetAssociativeCache(geometry);
    for (let address = 0; address < geometry.sizeBytes; address += 128) cache.access(address);
    for (let address = 0; address < geometry.sizeBytes; address += 128) expect(cache.contains(address)).toBe(true);
  });

  it('evicts the least recently used line of a set', () => {
    const cache = new SetAssociativeCache(geometry);
    const setStride = cache.sets * geometry.lineBytes; // addresses this far apart share a set
    cache.access(0);
    cache.access(setStride);
    cache.access(0); // line 0 is now the most recent
    cache.access(2 * setStride); // evicts setStride
    expect(cache.contains(0)).toBe(true);
    expect(cache.contains(setStride)).toBe(false);
    expect(cache.contains(2 * setStride)).toBe(true);
  });

  it('refuses geometries that do not divide into ways or have too many sectors', () => {
    expect(() => new SetAssociativeCache({ ...geometry, ways: 3 })).toThrow(RangeError);
    expect(() => new SetAssociativeCache({ ...geometry, sectorBytes: 8 })).toThrow(RangeError);
  });
});

describe('SetAssociativeCache with an interleave folded out', () => {
  it('fills every set with the chunks homed on it', () => {
    const interleave = { chunkBytes: 256, count: 2 };
    const cache = new SetAssociativeCache(geometry, interleave);
    // Every other 256 B chunk, twice the cache's size in all: exactly its capacity.
    const homed: number[] = [];
    for (let chunk = 0; homed.length * 128 < geometry.sizeBytes; chunk += 2) homed.push(chunk * 256, chunk * 256 + 128);
    for (const address of homed) cache.access(address);
    for (const address of homed) expect(cache.contains(address)).toBe(true);
    const plain = new SetAssociativeCache(geometry);
    for (const address of homed) plain.access(address);
    expect(homed.filter((address) => plain.contains(address)).length).toBeLessThan(homed.length);
  });
});

describe('SetAssociativeCache with a per-page set rotation', () => {
  const rotated = { ...geometry, pageSetRotation: { pageBytes: 2048, seed: 5 } };
  /** Lines of a capacity-sized sequential array starting at `base` that a second walk still finds. */
  const keptLines = (cache: SetAssociativeCache, base: number) => {
    for (let address = base; address < base + geometry.sizeBytes; address += 128) cache.access(address);
    let kept = 0;
    for (let address = base; address < base + geometry.sizeBytes; address += 128) kept += cache.contains(address) ? 1 : 0;
    return kept;
  };
  const lines = geometry.sizeBytes / 128;

  it('keeps a capacity-sized array that lies inside one page', () => {
    expect(keptLines(new SetAssociativeCache(rotated), 0)).toBe(lines);
  });

  it('loses lines of the same array at some placements across a page boundary only', () => {
    const kept = Array.from({ length: 16 }, (_, i) => keptLines(new SetAssociativeCache(rotated), 1024 + i * 128));
    expect(Math.min(...kept)).toBeLessThan(lines);
    expect(Math.max(...kept)).toBe(lines);
  });
});
