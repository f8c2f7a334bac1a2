import type { MemorySpace } from '../protocol.js';
import type { GpuModel } from './model.js';
import type { Prng } from './prng.js';
import { SetAssociativeCache } from './set-associative-cache.js';

/**
 * The cache state of one simulated GPU and the latency of one load. Per-SM
 * caches are created on first use (a batch touches only the SMs it needs).
 * Latencies returned here are the model's truth; `observe` adds what a real
 * timed load shows on top: clock-read overhead, jitter and rare outliers.
 */
export class SimulatedDevice {
  private readonly l1s: SetAssociativeCache[] = [];
  private readonly constantL1s: SetAssociativeCache[] = [];
  private readonly constantL15s: SetAssociativeCache[] = [];
  private readonly l2Segments: SetAssociativeCache[];
  private nextAddress = 0;

  constructor(
    readonly model: GpuModel,
    private readonly rng: Prng,
  ) {
    const interleave = { chunkBytes: model.l2.homeInterleaveBytes, count: model.l2.segmentCount };
    this.l2Segments = Array.from({ length: model.l2.segmentCount }, () => new SetAssociativeCache(model.l2.segment, interleave));
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

  /** SMs are split into contiguous groups, one per L2 segment (GPCs wired to one partition). */
  segmentOfSm(smId: number): number {
    return Math.floor((smId * this.model.l2.segmentCount) / this.model.device.multiprocessorCount);
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
      default:
        if (perSm(this.l1s, smId, model.l1).access(address)) return model.l1.hitLatencyCycles[space];
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

  /** A timing or clock reading with relative Gaussian jitter. */
  jitter(value: number, relativeStdev: number): number {
    return value * (1 + relativeStdev * this.rng.gaussian());
  }

  /**
   * Every line has a home segment (addresses interleaved across segments). A
   * load fills the SM's near segment and, for a far-homed line, its home too:
   * one SM's near hits are bounded by one segment, while far-homed lines
   * evicted from it are still far hits until the whole L2 is exceeded.
   */
  private l2LatencyCycles(smId: number, address: number): number {
    const l2 = this.model.l2;
    const near = this.segmentOfSm(smId);
    const home = Math.floor(address / l2.homeInterleaveBytes) % l2.segmentCount;
    if (this.l2Segments[near]!.access(address)) {
      return l2.farHomedHitsCostFar && home !== near ? l2.farHitLatencyCycles : l2.nearHitLatencyCycles;
    }
    if (home !== near && this.l2Segments[home]!.access(address)) return l2.farHitLatencyCycles;
    return this.model.deviceMemory.latencyCycles;
  }
}

function perSm(caches: SetAssociativeCache[], smId: number, geometry: ConstructorParameters<typeof SetAssociativeCache>[0]): SetAssociativeCache {
  let cache = caches[smId];
  if (!cache) {
    cache = new SetAssociativeCache(geometry);
    caches[smId] = cache;
  }
  return cache;
}
