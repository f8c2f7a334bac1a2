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
/** No slot: the end of a set's recency list. */
const NONE = -1;
/** Free slots of a set are bits of one int32 (see `freeSlots`). */
const MAX_WAYS = 32;
/** Lines up to this index take setOf's integer path (folded + rotation stays below 2^31 too). */
const MAX_INT32_LINE = 0x3fffffff;

/** A random eviction of a share of the lines (another tenant's slice), applied lazily: see evictShare. */
interface ShareEviction {
  /** Lines last touched at or before this tick were exposed to it. */
  tick: number;
  share: number;
  seed: number;
}

/**
 * LRU as stamps: a touched slot takes the next tick, the victim of a miss is
 * the set's slot with the smallest stamp (the first of them in slot order:
 * empty slots all hold 0). Stamps stay the truth (lazy evictions compare
 * them with their ticks), but no lookup scans them: each set keeps its
 * touched slots in a list ordered by stamp (oldest first) and its empty
 * slots (stamp 0) as bits, so a miss finds its victim in O(1). A line
 * looked up again right after (a walk in steps smaller than a line) and a
 * line above any the cache has held (a new array) skip the tag scan. The
 * outcome of every call is what the scan would give.
 */
export class SetAssociativeCache {
  readonly sets: number;
  private readonly ways: number;
  private readonly lineBytes: number;
  private readonly sectorBytes: number;
  private readonly tags: Int32Array;
  private readonly sectorMasks: Uint8Array;
  private readonly stamps: Float64Array;
  /** Per slot: the next older / newer touched slot of its set (NONE at the ends). */
  private readonly older: Int32Array;
  private readonly newer: Int32Array;
  /** Per set: its oldest and newest touched slot (NONE when it has none). */
  private readonly oldest: Int32Array;
  private readonly newest: Int32Array;
  /** Per set: bit w set when slot w of the set is empty (stamp 0). */
  private readonly freeSlots: Int32Array;
  private readonly allFree: number;
  private readonly chunkLines: number;
  private readonly chunkCount: number;
  /** log2 of chunkLines and chunkCount where they are powers of two, else -1. */
  private readonly chunkLinesShift: number;
  private readonly chunkCountShift: number;
  private readonly rotationPageLines: number;
  private readonly rotationSeed: number;
  private tick = 0;
  /** The slot the last miss filled, for widenLastFill. */
  private lastFillSlot = -1;
  /** The line the last access looked up and the slot it ended in: the next access to the same line needs no tag scan. */
  private lastLine = INVALID;
  private lastSlot = -1;
  /** The highest line filled since the last clear: a line above it is absent without a tag scan (a new array's lines). */
  private highestLine = INVALID;
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
    if (geometry.ways > MAX_WAYS) {
      throw new RangeError(`at most ${MAX_WAYS} ways`);
    }
    this.sets = lines / geometry.ways;
    this.ways = geometry.ways;
    this.lineBytes = geometry.lineBytes;
    this.sectorBytes = geometry.sectorBytes;
    this.tags = new Int32Array(lines).fill(INVALID);
    this.sectorMasks = new Uint8Array(lines);
    this.stamps = new Float64Array(lines);
    this.older = new Int32Array(lines);
    this.newer = new Int32Array(lines);
    this.oldest = new Int32Array(this.sets).fill(NONE);
    this.newest = new Int32Array(this.sets).fill(NONE);
    this.allFree = geometry.ways === MAX_WAYS ? -1 : (1 << geometry.ways) - 1;
    this.freeSlots = new Int32Array(this.sets).fill(this.allFree);
    this.chunkLines = interleave ? Math.max(1, Math.floor(interleave.chunkBytes / geometry.lineBytes)) : 1;
    this.chunkCount = interleave?.count ?? 1;
    this.chunkLinesShift = log2OfPowerOfTwo(this.chunkLines);
    this.chunkCountShift = log2OfPowerOfTwo(this.chunkCount);
    const rotation = geometry.pageSetRotation;
    this.rotationPageLines = rotation ? Math.max(1, Math.floor(rotation.pageBytes / geometry.lineBytes)) : 0;
    this.rotationSeed = rotation?.seed ?? 0;
  }

  /** The set a line maps to: its first slot is set × ways. */
  private setOf(line: number): number {
    if (line > MAX_INT32_LINE) return this.setOfLargeLine(line);
    // Integer arithmetic (| 0 truncates like Math.floor for these non-negative int32s; shifts where the
    // divisor is a power of two): V8 then divides in registers instead of calling fmod for a double `%`.
    // The hottest line of a simulated discovery.
    const chunk = this.chunkLinesShift >= 0 ? line >> this.chunkLinesShift : (line / this.chunkLines) | 0;
    const group = this.chunkCountShift >= 0 ? chunk >> this.chunkCountShift : (chunk / this.chunkCount) | 0;
    const folded = group * this.chunkLines + (line - chunk * this.chunkLines);
    return ((folded + this.pageRotation(line)) | 0) % this.sets;
  }

  /** setOf in double arithmetic, for lines past int32 (addresses beyond 2^31 lines; no simulated GPU has them). */
  private setOfLargeLine(line: number): number {
    const chunk = Math.floor(line / this.chunkLines);
    const folded = Math.floor(chunk / this.chunkCount) * this.chunkLines + (line - chunk * this.chunkLines);
    return (folded + this.pageRotation(line)) % this.sets;
  }

  private pageRotation(line: number): number {
    if (this.rotationPageLines === 0) return 0;
    return mixSeed(this.rotationSeed, Math.floor(line / this.rotationPageLines)) % this.sets;
  }

  /** The slot of the set starting at `first` that holds `line` (lazily evicted copies emptied on the way), or -1. */
  private find(line: number, first: number): number {
    if (this.lastLine === line && this.tags[this.lastSlot] === line) {
      // A set holds a line in one slot at most (a miss fills only after the scan emptied any evicted copy).
      return this.evictedSinceTouched(this.lastSlot, line) ? -1 : this.lastSlot;
    }
    const tags = this.tags;
    const end = first + this.ways;
    for (let slot = first; slot < end; slot += 1) {
      if (tags[slot] === line) return this.evictedSinceTouched(slot, line) ? -1 : slot;
    }
    return -1;
  }

  /** Looks the sector up and fills it when absent (evicting the LRU line). True on a hit. */
  access(address: number): boolean {
    const line = Math.floor(address / this.lineBytes);
    const sectorBit = 1 << (((address - line * this.lineBytes) / this.sectorBytes) | 0);
    const set = this.setOf(line);
    const first = set * this.ways;
    this.tick += 1;
    let slot = line > this.highestLine ? -1 : this.find(line, first);
    this.lastLine = line;
    if (slot >= 0) {
      this.touch(slot, set, first);
      this.lastSlot = slot;
      const mask = this.sectorMasks[slot]!;
      if ((mask & sectorBit) !== 0) return true;
      this.sectorMasks[slot] = mask | sectorBit;
      this.lastFillSlot = slot;
      return false;
    }
    const free = this.freeSlots[set]!;
    slot = free !== 0 ? first + 31 - Math.clz32(free & -free) : this.oldest[set]!;
    if (line > this.highestLine) this.highestLine = line;
    this.tags[slot] = line;
    this.sectorMasks[slot] = sectorBit;
    this.touch(slot, set, first);
    this.lastSlot = slot;
    this.lastFillSlot = slot;
    return false;
  }

  /** Stamps the slot with the current tick: it becomes its set's newest. */
  private touch(slot: number, set: number, first: number): void {
    if (this.stamps[slot] === 0) this.freeSlots[set] = this.freeSlots[set]! & ~(1 << (slot - first));
    else if (this.newest[set] === slot) {
      this.stamps[slot] = this.tick;
      return;
    } else this.unlink(slot, set);
    this.stamps[slot] = this.tick;
    const newest = this.newest[set]!;
    this.older[slot] = newest;
    this.newer[slot] = NONE;
    if (newest === NONE) this.oldest[set] = slot;
    else this.newer[newest] = slot;
    this.newest[set] = slot;
  }

  /** Takes a touched slot out of its set's recency list. */
  private unlink(slot: number, set: number): void {
    const older = this.older[slot]!;
    const newer = this.newer[slot]!;
    if (older === NONE) this.oldest[set] = newer;
    else this.newer[older] = newer;
    if (newer === NONE) this.newest[set] = older;
    else this.older[newer] = older;
  }

  /** Empties a slot: no line, stamp 0 (its set's next victim, unless an emptier slot comes first). */
  private empty(slot: number): void {
    const set = Math.floor(slot / this.ways);
    if (this.stamps[slot] !== 0) {
      this.unlink(slot, set);
      this.freeSlots[set] = this.freeSlots[set]! | (1 << (slot - set * this.ways));
    }
    this.tags[slot] = INVALID;
    this.sectorMasks[slot] = 0;
    this.stamps[slot] = 0;
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
    const sectorBit = 1 << (((address - line * this.lineBytes) / this.sectorBytes) | 0);
    const slot = this.find(line, this.setOf(line) * this.ways);
    if (slot < 0) return false;
    const mask = this.sectorMasks[slot]!;
    if ((mask & sectorBit) === 0) return false;
    this.sectorMasks[slot] = mask & ~sectorBit;
    if (this.sectorMasks[slot] === 0) this.empty(slot);
    return true;
  }

  /** Empties the cache (an invalidation, or a flush: write-back costs nothing here). */
  clear(): void {
    this.tags.fill(INVALID);
    this.sectorMasks.fill(0);
    this.stamps.fill(0);
    this.oldest.fill(NONE);
    this.newest.fill(NONE);
    this.freeSlots.fill(this.allFree);
    this.tick = 0;
    this.lastFillSlot = -1;
    this.lastLine = INVALID;
    this.highestLine = INVALID;
    this.evictions = [];
  }

  /** True when the sector is present; changes nothing. */
  contains(address: number): boolean {
    const line = Math.floor(address / this.lineBytes);
    const sectorBit = 1 << (((address - line * this.lineBytes) / this.sectorBytes) | 0);
    const slot = this.find(line, this.setOf(line) * this.ways);
    return slot >= 0 && (this.sectorMasks[slot]! & sectorBit) !== 0;
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
        this.empty(slot);
        return true;
      }
    }
    return false;
  }
}

/** log2(value) for a power of two, else -1. */
function log2OfPowerOfTwo(value: number): number {
  return Number.isInteger(value) && value > 0 && (value & (value - 1)) === 0 ? 31 - Math.clz32(value) : -1;
}
