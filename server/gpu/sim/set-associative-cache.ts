import { hash32, mixSeed } from './prng.js';

/**
 * One set-associative, sectored, LRU cache. Tags, valid-sector masks and LRU
 * stamps live in typed arrays so a 25 MiB L2 segment walk stays cheap in JS.
 * A line is allocated on a miss but only the requested sector is filled
 * (thesis §2: sector caches; a miss on another sector of a present line is a
 * miss to the next level).
 */
export interface CacheGeometry {
  sizeBytes: number;
  lineBytes: number;
  /** Equal to lineBytes for unsectored caches. */
  sectorBytes: number;
  ways: number;
  /**
   * Optional set-index hashing that makes some misses depend on where an
   * array sits (a real L1 hashes addresses to sets): every page of
   * `pageBytes` gets its own seeded rotation of the set index. An array
   * inside one page fills the sets evenly; one that straddles a page boundary
   * may put more lines than ways into some sets and thrash them, at some
   * placements only, even below the capacity.
   */
  pageSetRotation?: { pageBytes: number; seed: number };
}

/**
 * Addresses interleaved over `count` caches in chunks of `chunkBytes` (L2
 * segments): each cache sees only every count-th chunk, so its set index is
 * taken with the interleave folded out, or half its sets would stay empty.
 */
export interface Interleave {
  chunkBytes: number;
  count: number;
}

const INVALID = -1;

/** A random eviction of a share of the lines (another tenant's slice), applied lazily: see evictShare. */
interface ShareEviction {
  /** Lines last touched at or before this tick were exposed to it. */
  tick: number;
  share: number;
  seed: number;
}

export class SetAssociativeCache {
  readonly sets: number;
  private readonly ways: number;
  private readonly lineBytes: number;
  private readonly sectorBytes: number;
  private readonly tags: Int32Array;
  private readonly sectorMasks: Uint8Array;
  private readonly stamps: Float64Array;
  private readonly chunkLines: number;
  private readonly chunkCount: number;
  private readonly rotationPageLines: number;
  private readonly rotationSeed: number;
  private tick = 0;
  /** The slot the last miss filled, for widenLastFill. */
  private lastFillSlot = -1;
  /** Share evictions since the last clear, ticks ascending (empty unless a tenant interferes). */
  private evictions: ShareEviction[] = [];

  constructor(geometry: CacheGeometry, interleave?: Interleave) {
    const lines = Math.floor(geometry.sizeBytes / geometry.lineBytes);
    if (lines % geometry.ways !== 0) {
      throw new RangeError(`cache of ${lines} lines cannot be split into ${geometry.ways} ways`);
    }
    if (geometry.lineBytes / geometry.sectorBytes > 8) {
      throw new RangeError('at most 8 sectors per line');
    }
    this.sets = lines / geometry.ways;
    this.ways = geometry.ways;
    this.lineBytes = geometry.lineBytes;
    this.sectorBytes = geometry.sectorBytes;
    this.tags = new Int32Array(lines).fill(INVALID);
    this.sectorMasks = new Uint8Array(lines);
    this.stamps = new Float64Array(lines);
    this.chunkLines = interleave ? Math.max(1, Math.floor(interleave.chunkBytes / geometry.lineBytes)) : 1;
    this.chunkCount = interleave?.count ?? 1;
    const rotation = geometry.pageSetRotation;
    this.rotationPageLines = rotation ? Math.max(1, Math.floor(rotation.pageBytes / geometry.lineBytes)) : 0;
    this.rotationSeed = rotation?.seed ?? 0;
  }

  private firstSlot(line: number): number {
    const chunk = Math.floor(line / this.chunkLines);
    const folded = Math.floor(chunk / this.chunkCount) * this.chunkLines + (line - chunk * this.chunkLines);
    return ((folded + this.pageRotation(line)) % this.sets) * this.ways;
  }

  private pageRotation(line: number): number {
    if (this.rotationPageLines === 0) return 0;
    return mixSeed(this.rotationSeed, Math.floor(line / this.rotationPageLines)) % this.sets;
  }

  /** Looks the sector up and fills it when absent (evicting the LRU line). True on a hit. */
  access(address: number): boolean {
    const line = Math.floor(address / this.lineBytes);
    const sectorBit = 1 << Math.floor((address - line * this.lineBytes) / this.sectorBytes);
    const first = this.firstSlot(line);
    const end = first + this.ways;
    this.tick += 1;
    let victim = first;
    for (let slot = first; slot < end; slot += 1) {
      if (this.tags[slot] === line && !this.evictedSinceTouched(slot, line)) {
        this.stamps[slot] = this.tick;
        const mask = this.sectorMasks[slot]!;
        if ((mask & sectorBit) !== 0) return true;
        this.sectorMasks[slot] = mask | sectorBit;
        this.lastFillSlot = slot;
        return false;
      }
      if (this.stamps[slot]! < this.stamps[victim]!) victim = slot;
    }
    this.tags[victim] = line;
    this.sectorMasks[victim] = sectorBit;
    this.stamps[victim] = this.tick;
    this.lastFillSlot = victim;
    return false;
  }

  /**
   * Widens the fill of the last miss, at `address`, to the `chunkBytes`
   * (sector multiple, at most a line) aligned chunk around its sector: a
   * next level that delivers more than a sector per miss. O(1).
   */
  widenLastFill(address: number, chunkBytes: number): void {
    const slot = this.lastFillSlot;
    const line = Math.floor(address / this.lineBytes);
    if (slot < 0 || this.tags[slot] !== line) return;
    const offset = address - line * this.lineBytes;
    const firstSector = (offset - (offset % chunkBytes)) / this.sectorBytes;
    const chunkMask = ((1 << (chunkBytes / this.sectorBytes)) - 1) << firstSector;
    this.sectorMasks[slot] = this.sectorMasks[slot]! | chunkMask;
  }

  /**
   * Takes the sector out when present (the line goes when its last sector
   * does): true when it was there. Lets a line move from one cache to another.
   */
  take(address: number): boolean {
    const line = Math.floor(address / this.lineBytes);
    const sectorBit = 1 << Math.floor((address - line * this.lineBytes) / this.sectorBytes);
    const first = this.firstSlot(line);
    for (let slot = first; slot < first + this.ways; slot += 1) {
      if (this.tags[slot] !== line || this.evictedSinceTouched(slot, line)) continue;
      const mask = this.sectorMasks[slot]!;
      if ((mask & sectorBit) === 0) return false;
      this.sectorMasks[slot] = mask & ~sectorBit;
      if (this.sectorMasks[slot] === 0) {
        this.tags[slot] = INVALID;
        this.stamps[slot] = 0; // the set's next victim
      }
      return true;
    }
    return false;
  }

  /** Empties the cache (an invalidation, or a flush: write-back costs nothing here). */
  clear(): void {
    this.tags.fill(INVALID);
    this.sectorMasks.fill(0);
    this.stamps.fill(0);
    this.tick = 0;
    this.lastFillSlot = -1;
    this.evictions = [];
  }

  /** True when the sector is present; changes nothing. */
  contains(address: number): boolean {
    const line = Math.floor(address / this.lineBytes);
    const sectorBit = 1 << Math.floor((address - line * this.lineBytes) / this.sectorBytes);
    const first = this.firstSlot(line);
    for (let slot = first; slot < first + this.ways; slot += 1) {
      if (this.tags[slot] === line && !this.evictedSinceTouched(slot, line)) return (this.sectorMasks[slot]! & sectorBit) !== 0;
    }
    return false;
  }

  /**
   * Evicts each line with probability `share` (seeded by `seed`), as a
   * tenant streaming through the cache does. Lazily: a line is checked
   * against the evictions since it was last touched when it is next looked
   * up, so an eviction costs O(1) however large the cache.
   */
  evictShare(share: number, seed: number): void {
    if (share <= 0) return;
    this.evictions.push({ tick: this.tick, share, seed: seed >>> 0 });
    this.tick += 1;
  }

  /** Whether an eviction since the slot's line was last touched took it; if so the slot is emptied. */
  private evictedSinceTouched(slot: number, line: number): boolean {
    const evictions = this.evictions;
    if (evictions.length === 0 || this.stamps[slot]! > evictions[evictions.length - 1]!.tick) return false;
    const stamp = this.stamps[slot]!;
    let low = 0;
    let high = evictions.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (evictions[mid]!.tick < stamp) low = mid + 1;
      else high = mid;
    }
    for (let i = low; i < evictions.length; i += 1) {
      const eviction = evictions[i]!;
      if (hash32((line ^ eviction.seed) >>> 0) / 4294967296 < eviction.share) {
        this.tags[slot] = INVALID;
        this.sectorMasks[slot] = 0;
        this.stamps[slot] = 0;
        return true;
      }
    }
    return false;
  }
}
