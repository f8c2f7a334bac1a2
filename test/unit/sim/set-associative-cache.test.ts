import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hash32 } from '../../../server/gpu/sim/prng.js';
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

/**
 * The cache as it was first written (issue 18 made it faster): every lookup
 * scans the set's tags, a miss evicts the way with the smallest stamp (the
 * first of them), evictions apply lazily. The fast cache must answer every
 * call as this one does, or simulated discoveries would change.
 */
class ScanningCache {
  private readonly tags: number[];
  private readonly masks: number[];
  private readonly stamps: number[];
  private readonly sets: number;
  private tick = 0;
  private lastFill = -1;
  private evictions: Array<{ tick: number; share: number; seed: number }> = [];

  constructor(private readonly g: { sizeBytes: number; lineBytes: number; sectorBytes: number; ways: number }) {
    const lines = g.sizeBytes / g.lineBytes;
    this.sets = lines / g.ways;
    this.tags = new Array<number>(lines).fill(-1);
    this.masks = new Array<number>(lines).fill(0);
    this.stamps = new Array<number>(lines).fill(0);
  }

  private locate(address: number) {
    const line = Math.floor(address / this.g.lineBytes);
    const bit = 1 << Math.floor((address - line * this.g.lineBytes) / this.g.sectorBytes);
    return { line, bit, first: (line % this.sets) * this.g.ways };
  }

  private evicted(slot: number, line: number): boolean {
    for (const eviction of this.evictions) {
      if (eviction.tick < this.stamps[slot]!) continue;
      if (hash32((line ^ eviction.seed) >>> 0) / 4294967296 < eviction.share) {
        this.tags[slot] = -1;
        this.masks[slot] = 0;
        this.stamps[slot] = 0;
        return true;
      }
    }
    return false;
  }

  access(address: number): boolean {
    const { line, bit, first } = this.locate(address);
    this.tick += 1;
    let victim = first;
    for (let slot = first; slot < first + this.g.ways; slot += 1) {
      if (this.tags[slot] === line && !this.evicted(slot, line)) {
        this.stamps[slot] = this.tick;
        if ((this.masks[slot]! & bit) !== 0) return true;
        this.masks[slot]! |= bit;
        this.lastFill = slot;
        return false;
      }
      if (this.stamps[slot]! < this.stamps[victim]!) victim = slot;
    }
    [this.tags[victim], this.masks[victim], this.stamps[victim], this.lastFill] = [line, bit, this.tick, victim];
    return false;
  }

  take(address: number): boolean {
    const { line, bit, first } = this.locate(address);
    for (let slot = first; slot < first + this.g.ways; slot += 1) {
      if (this.tags[slot] !== line || this.evicted(slot, line)) continue;
      if ((this.masks[slot]! & bit) === 0) return false;
      this.masks[slot]! &= ~bit;
      if (this.masks[slot] === 0) [this.tags[slot], this.stamps[slot]] = [-1, 0];
      return true;
    }
    return false;
  }

  contains(address: number): boolean {
    const { line, bit, first } = this.locate(address);
    for (let slot = first; slot < first + this.g.ways; slot += 1) {
      if (this.tags[slot] === line && !this.evicted(slot, line)) return (this.masks[slot]! & bit) !== 0;
    }
    return false;
  }

  widenLastFill(address: number, chunkBytes: number): void {
    const line = Math.floor(address / this.g.lineBytes);
    if (this.lastFill < 0 || this.tags[this.lastFill] !== line) return;
    const offset = address - line * this.g.lineBytes;
    const firstSector = (offset - (offset % chunkBytes)) / this.g.sectorBytes;
    this.masks[this.lastFill]! |= ((1 << (chunkBytes / this.g.sectorBytes)) - 1) << firstSector;
  }

  evictShare(share: number, seed: number): void {
    this.evictions.push({ tick: this.tick, share, seed: seed >>> 0 });
    this.tick += 1;
  }

  clear(): void {
    this.tags.fill(-1);
    this.masks.fill(0);
    this.stamps.fill(0);
    [this.tick, this.lastFill, this.evictions] = [0, -1, []];
  }
}

describe('SetAssociativeCache answers as a cache that scans every way', () => {
  const operation = fc.oneof(
    { weight: 12, arbitrary: fc.record({ op: fc.constant('access' as const), line: fc.nat(63), sector: fc.nat(3) }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('take' as const), line: fc.nat(63), sector: fc.nat(3) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('contains' as const), line: fc.nat(63), sector: fc.nat(3) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('widen' as const), line: fc.nat(63), sector: fc.nat(3) }) },
    {
      weight: 1,
      arbitrary: fc.record({ op: fc.constant('evict' as const), share: fc.double({ min: 0.05, max: 0.9, noNaN: true }), seed: fc.nat() }),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('clear' as const) }) },
  );

  it('for any sequence of calls, with and without a tenant evicting lines', () => {
    fc.assert(
      fc.property(fc.constantFrom(1, 2, 4), fc.array(operation, { maxLength: 400 }), (ways, operations) => {
        const shape = { sizeBytes: 4 * ways * 128, lineBytes: 128, sectorBytes: 32, ways }; // 4 sets
        const fast = new SetAssociativeCache(shape);
        const scanning = new ScanningCache(shape);
        const answers: Array<[unknown, unknown]> = [];
        for (const step of operations) {
          if (step.op === 'evict') {
            fast.evictShare(step.share, step.seed);
            scanning.evictShare(step.share, step.seed);
          } else if (step.op === 'clear') {
            fast.clear();
            scanning.clear();
          } else {
            const address = step.line * 128 + step.sector * 32;
            if (step.op === 'widen') {
              fast.widenLastFill(address, 64);
              scanning.widenLastFill(address, 64);
            } else answers.push([fast[step.op](address), scanning[step.op](address)]);
          }
        }
        for (let address = 0; address < 64 * 128; address += 32) answers.push([fast.contains(address), scanning.contains(address)]);
        expect(answers.map(([a]) => a)).toEqual(answers.map(([, b]) => b));
      }),
      { numRuns: 300 },
    );
  });
});
