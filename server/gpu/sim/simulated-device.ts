import type { MemorySpace } from '../../protocol/ops.js';
import type { Interference } from './interference.js';
import { l1CapacityBytes } from './launch.js';
import type { GpuModel, L1Space } from './model.js';
import { hash32, type Prng } from './prng.js';
import { SetAssociativeCache, type CacheGeometry } from './set-associative-cache.js';

/**
 * The cache state of one simulated GPU and the latency of one load.
 *
 * Paths (NVIDIA): global `.ca`, read-only and texture loads look in the
 * SM's L1 (sectored: a miss asks the L2 for one 32 B sector); constant loads
 * in the SM's constant L1, then its L1.5; `.cg` loads go straight to the L2;
 * shared loads take a fixed latency. The L2 is split in segments: an SM looks
 * in its near segment, then in the line's home segment; device memory fills
 * the L2 in `maxL2FetchGranularityBytes` chunks.
 *
 * Per-SM caches start empty at every launch (`startLaunch`: GPUs invalidate
 * the L1 between kernels) and the L1 takes the capacity the launch's carveout
 * leaves. Latencies returned here are the model's truth; `observe` adds what
 * a timed load shows on top: clock-read overhead, jitter and rare outliers.
 * With an `interference` (another tenant, ./interference.ts), a load during
 * which the tenant takes a time slice also shows the slice, and the slice
 * evicts L2 lines and the SM's L1s.
 */
export { hash32 } from './prng.js';

export class SimulatedDevice {
  /** Per-SM L1s by physical cache id (model.l1.physicalCacheOf), then SM: id 0 is the unified L1, others caches beside it. */
  private readonly l1s: SetAssociativeCache[][] = [];
  private readonly l1Bytes: number[] = [];
  private readonly constantL1s: SetAssociativeCache[] = [];
  private readonly constantL15s: SetAssociativeCache[] = [];
  private readonly l2Segments: SetAssociativeCache[];
  private readonly defaultL1Bytes: number;
  private fetchBytes: number;
  private nextAddress = 0;
  /** Loads walked since the device was created, warm-ups included. */
  loadCount = 0;
  /** Sum of those loads' true latencies. */
  loadCycles = 0;
  private deviceSeconds = 0;

  constructor(
    readonly model: GpuModel,
    private readonly rng: Prng,
    private readonly interference: Interference | null = null,
  ) {
    const interleave = { chunkBytes: model.l2.homeInterleaveBytes, count: model.l2.segmentCount };
    this.l2Segments = Array.from({ length: model.l2.segmentCount }, () => new SetAssociativeCache(model.l2.segment, interleave));
    this.defaultL1Bytes = l1CapacityBytes(model, 0, 0);
    this.fetchBytes = this.clampFetch(model.device.maxL2FetchGranularityBytes);
  }

  /** The fetch-granularity limit of the launches that follow (cudaLimitMaxL2FetchGranularity); undefined restores the model's. */
  setL2FetchGranularity(bytes: number | undefined): void {
    this.fetchBytes = this.clampFetch(bytes ?? this.model.device.maxL2FetchGranularityBytes);
  }

  private clampFetch(bytes: number): number {
    return Math.min(this.model.l2.segment.lineBytes, Math.max(this.model.l2.segment.sectorBytes, bytes));
  }

  /** A fresh, line-aligned device address range (wraps like a reused allocation). */
  allocate(bytes: number): number {
    const align = 4096;
    const size = Math.ceil(bytes / align) * align;
    if (this.nextAddress + size > this.model.device.totalMemoryBytes) this.nextAddress = 0;
    const base = this.nextAddress;
    this.nextAddress += size;
    return base;
  }

  /** The L2 segment an SM is wired to: its GPC's (model.l2.segmentOfGpc). */
  segmentOfSm(smId: number): number {
    const gpc = this.model.compute.gpcOfSm[smId];
    return gpc === undefined ? 0 : (this.model.l2.segmentOfGpc[gpc] ?? 0);
  }

  /**
   * The segment a line is homed on: chunks of `homeInterleaveBytes` are dealt
   * to the segments in groups of one chunk each, in an order hashed per
   * group, so the near/far pattern along an array looks irregular while every
   * segment still gets every count-th chunk (the L2's set index folds that out).
   */
  homeSegment(address: number): number {
    const count = this.model.l2.segmentCount;
    if (count === 1) return 0;
    const chunk = Math.floor(address / this.model.l2.homeInterleaveBytes);
    const group = Math.floor(chunk / count);
    return (chunk - group * count + (hash32(group) % count)) % count;
  }

  /**
   * A new launch on `smIds`: their L1 and constant caches start empty, and
   * the L1 is rebuilt when the carveout gives it another capacity.
   */
  startLaunch(smIds: Iterable<number>, l1Bytes: number): void {
    for (const smId of smIds) {
      if (this.l1Bytes[smId] === l1Bytes) for (const caches of this.l1s) caches?.[smId]?.clear();
      else this.setL1(smId, l1Bytes);
      this.constantL1s[smId]?.clear();
      this.constantL15s[smId]?.clear();
    }
  }

  /** The L1 capacity of an SM now (the default carveout before its first launch). */
  l1CapacityOf(smId: number): number {
    return this.l1Bytes[smId] ?? this.defaultL1Bytes;
  }

  /** Streams twice the L2's size through it: every segment ends up without the lines it held. */
  flushL2(): void {
    for (const segment of this.l2Segments) segment.clear();
    this.addSeconds((2 * this.model.device.l2CacheSizeBytes) / this.model.deviceMemory.readBandwidthBytesPerS);
  }

  /**
   * A chain element written by the kernel that builds the chain: the sector
   * lands, dirty, in its home segment (no device-memory read).
   */
  writeThroughL2(address: number): void {
    this.l2Segments[this.homeSegment(address)]!.access(address);
  }

  /**
   * One load walked: its true latency, counted in the device's totals. Under
   * interference, plus the stall of any time slice the tenant took meanwhile
   * (counted as device time, not as load cycles). `wallShare`: the share of
   * its latency that is wall time (1 / threads for a lap walked by a block).
   */
  load(smId: number, space: MemorySpace, address: number, wallShare = 1): number {
    const latency = this.loadLatencyCycles(smId, space, address);
    this.loadCount += 1;
    this.loadCycles += latency;
    if (this.interference === null) return latency;
    const stallCycles = this.interference.advance(latency * wallShare);
    if (stallCycles === 0) return latency;
    this.tenantSlice(smId);
    this.addSeconds(stallCycles / this.model.clock.smClockHz);
    return latency + stallCycles;
  }

  /** A time-sliced timing of `seconds` of our work (bandwidth launches): longer by any slice the tenant took meanwhile. */
  timeSliced(seconds: number): number {
    if (this.interference === null) return seconds;
    const slicesBefore = this.interference.slices;
    const stretched = this.interference.stretchSeconds(seconds);
    if (this.interference.slices !== slicesBefore) this.tenantSlice(null);
    return stretched;
  }

  /** The tenant's slice: its stream evicts a share of every L2 segment, and the context switch invalidates the preempted SM's L1s. */
  private tenantSlice(smId: number | null): void {
    const interference = this.interference!;
    const seed = interference.sliceSeed();
    for (const [index, segment] of this.l2Segments.entries()) segment.evictShare(interference.evictionShare, hash32(seed + index));
    if (smId === null) return;
    for (const caches of this.l1s) caches?.[smId]?.clear();
    this.constantL1s[smId]?.clear();
    this.constantL15s[smId]?.clear();
  }

  loadLatencyCycles(smId: number, space: MemorySpace, address: number): number {
    const model = this.model;
    switch (space) {
      case 'shared':
        return model.shared.latencyCycles;
      case 'constant':
        if (perSm(this.constantL1s, smId, model.constantL1).access(address)) return model.constantL1.hitLatencyCycles;
        if (perSm(this.constantL15s, smId, model.constantL15).access(address)) return model.constantL15.hitLatencyCycles;
        return this.l2LatencyCycles(smId, address);
      case 'global.cg':
        return this.l2LatencyCycles(smId, address);
      case 'global':
        return this.loadLatencyCycles(smId, model.l1.cachesDefaultGlobalLoads ? 'global.ca' : 'global.cg', address);
      default:
        if (this.l1(smId, space).access(address)) return model.l1.hitLatencyCycles[space];
        return this.l2LatencyCycles(smId, address);
    }
  }

  /** What the SM clock shows for a load of the given true latency. */
  observe(latencyCycles: number): number {
    const noise = this.model.noise;
    const stdev = Math.max(noise.minStdevCycles, latencyCycles * noise.relativeStdev);
    let observed = latencyCycles + this.model.clock.clockReadOverheadCycles + stdev * this.rng.gaussian();
    if (this.rng.next() < noise.outlierProbability) {
      observed += this.rng.uniform(noise.outlierMinCycles, noise.outlierMaxCycles);
    }
    return Math.max(1, Math.round(observed));
  }

  /** A uniform integer in [0, bound): where a simulated scheduler starts placing (server/gpu/sim/compute.ts). */
  randomBelow(bound: number): number {
    return this.rng.nextInt(bound);
  }

  /** A timing or clock reading with relative Gaussian jitter. */
  jitter(value: number, relativeStdev: number): number {
    return value * (1 + relativeStdev * this.rng.gaussian());
  }

  /** Adds modelled time the GPU was busy (launches, flushes, bandwidth runs). */
  addSeconds(seconds: number): void {
    this.deviceSeconds += seconds;
  }

  /** Simulated GPU time so far: what the ops would have kept a real GPU busy. */
  simulatedDeviceSeconds(): number {
    return this.deviceSeconds;
  }

  /** The physical cache a load path of an SM goes through, made at the SM's L1 capacity on first use. */
  private l1(smId: number, space: L1Space): SetAssociativeCache {
    const physical = this.model.l1.physicalCacheOf[space];
    const caches = this.l1s[physical] ?? [];
    this.l1s[physical] = caches;
    const cache = caches[smId] ?? this.newL1(this.l1CapacityOf(smId));
    caches[smId] = cache;
    return cache;
  }

  /** A new capacity for an SM's L1 paths: the unified L1 and any cache beside it start over at that size. */
  private setL1(smId: number, sizeBytes: number): void {
    for (const caches of this.l1s) if (caches) delete caches[smId];
    this.l1Bytes[smId] = sizeBytes;
  }

  private newL1(sizeBytes: number): SetAssociativeCache {
    const { lineBytes, sectorBytes, ways, pageSetRotation } = this.model.l1;
    return new SetAssociativeCache(
      pageSetRotation ? { sizeBytes, lineBytes, sectorBytes, ways, pageSetRotation } : { sizeBytes, lineBytes, sectorBytes, ways },
    );
  }

  /**
   * Every line has a home segment. A load looks in the SM's near segment
   * (filling it on a miss), then in the home segment of a far-homed line:
   * there the line stays ('near-and-home', filled on a miss too) or moves to
   * the near segment ('near-only'). A miss in both reads device memory,
   * which fills the fetch-granularity chunk around the sector.
   */
  private l2LatencyCycles(smId: number, address: number): number {
    const l2 = this.model.l2;
    const near = this.segmentOfSm(smId);
    const home = this.homeSegment(address);
    if (this.interference?.tenantFillsNow()) {
      const tenant = this.interference.tenantAddress();
      this.l2Segments[this.homeSegment(tenant)]!.access(tenant);
    }
    const nearSegment = this.l2Segments[near]!;
    if (nearSegment.access(address)) {
      return l2.farHomedHitsCostFar && home !== near ? l2.farHitLatencyCycles : l2.nearHitLatencyCycles;
    }
    if (home !== near) {
      const homeSegment = this.l2Segments[home]!;
      if (l2.farLineResidence === 'near-only') {
        if (homeSegment.take(address)) return l2.farHitLatencyCycles;
      } else {
        // The near segment already took a copy (access fills on a miss): a line read by both groups is held twice.
        if (homeSegment.access(address)) return l2.farPartitionHitLatencyCycles ?? l2.farHitLatencyCycles;
        this.fillFetchChunk(homeSegment, address);
      }
    }
    this.fillFetchChunk(nearSegment, address);
    const memory = this.model.deviceMemory;
    return home === near ? (memory.nearLatencyCycles ?? memory.latencyCycles) : memory.latencyCycles;
  }

  /** After a device-memory read: the fetch-granularity chunk around the sector (the lookup filled the sector itself). */
  private fillFetchChunk(segment: SetAssociativeCache, address: number): void {
    if (this.fetchBytes > this.model.l2.segment.sectorBytes) segment.widenLastFill(address, this.fetchBytes);
  }
}

function perSm(caches: SetAssociativeCache[], smId: number, geometry: CacheGeometry): SetAssociativeCache {
  let cache = caches[smId];
  if (!cache) {
    cache = new SetAssociativeCache(geometry);
    caches[smId] = cache;
  }
  return cache;
}
