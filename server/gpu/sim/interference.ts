import type { GpuModel } from './model.js';
import type { Prng } from './prng.js';

/**
 * Another tenant on the simulated GPU (issue 17 item 3), at an intensity in
 * 0..1 (0: no tenant, the simulator as it always was, bit for bit). Without
 * MPS, kernels of two processes do not run at once: the GPU time-slices
 * between them. So the tenant
 * - takes time slices: our kernels run for an exponentially distributed
 *   stretch of wall time, then stall for one slice while the tenant runs.
 *   A timed load that spans a slice shows the whole slice as its latency
 *   (the SM clock keeps counting); a bandwidth repetition that spans one
 *   takes that much longer;
 * - evicts in its slice what it streams through the L2: each line is gone
 *   with probability `intensity`, and every L1 of the preempted SM is
 *   invalidated by the context switch;
 * - keeps a working set resident between slices (its lines come back with
 *   it): modelled as one tenant line filled into the L2 per so many of our
 *   L2 lookups, which shrinks the share of the L2 we see.
 */
export interface InterferenceOptions {
  /** 0..1: the tenant's time share is intensity / 2; its slices evict this share of the L2. */
  intensity: number;
}

/** The tenant's share of GPU time at intensity 1: two processes time-sliced evenly. */
const FULL_TIME_SHARE = 0.5;
/** One slice of the tenant's: half a millisecond. */
const SLICE_SECONDS = 0.5e-3;
/** Tenant L2 lines filled per L2 lookup of ours at intensity 1 (its resident working set). */
const FULL_TENANT_FILLS_PER_LOOKUP = 0.15;

export function validateIntensity(intensity: number, what: string): number {
  if (!Number.isFinite(intensity) || intensity < 0 || intensity > 1)
    throw new RangeError(`${what} must be an interference intensity in 0..1, got ${intensity}`);
  return intensity;
}

export class Interference {
  private readonly sliceCycles: number;
  private readonly meanRunCycles: number;
  private readonly tenantFillsPerLookup: number;
  /** Wall cycles our kernels still run before the tenant's next slice. */
  private runCyclesLeft: number;
  /** Slices so far (for the slice's eviction hash and for tests). */
  slices = 0;

  constructor(
    readonly intensity: number,
    private readonly model: GpuModel,
    private readonly rng: Prng,
  ) {
    validateIntensity(intensity, 'the interference intensity');
    const share = FULL_TIME_SHARE * intensity;
    this.sliceCycles = SLICE_SECONDS * model.clock.smClockHz;
    this.meanRunCycles = share > 0 ? (this.sliceCycles * (1 - share)) / share : Infinity;
    this.tenantFillsPerLookup = FULL_TENANT_FILLS_PER_LOOKUP * intensity;
    this.runCyclesLeft = this.nextRunCycles();
  }

  /** The share of L2 lines one slice of the tenant evicts. */
  get evictionShare(): number {
    return this.intensity;
  }

  /**
   * Our kernels ran `wallCycles` more: the stall cycles of the tenant's
   * slices that began meanwhile (0 when none did); `slices` counts them.
   */
  advance(wallCycles: number): number {
    this.runCyclesLeft -= wallCycles;
    if (this.runCyclesLeft > 0) return 0;
    let stallCycles = 0;
    while (this.runCyclesLeft <= 0) {
      stallCycles += this.sliceCycles * this.rng.uniform(0.5, 1.5);
      this.slices += 1;
      this.runCyclesLeft += this.nextRunCycles();
    }
    return Math.round(stallCycles);
  }

  /** A timing of `seconds` of our GPU work, stretched by the slices that fall into it. */
  stretchSeconds(seconds: number): number {
    return seconds + this.advance(seconds * this.model.clock.smClockHz) / this.model.clock.smClockHz;
  }

  /** Whether the tenant fills one of its lines into the L2 beside this lookup of ours. */
  tenantFillsNow(): boolean {
    return this.tenantFillsPerLookup > 0 && this.rng.next() < this.tenantFillsPerLookup;
  }

  /** A line of the tenant's working set (addresses past device memory: never one of ours). */
  tenantAddress(): number {
    const lines = (2 * this.model.device.l2CacheSizeBytes) / this.model.l2.segment.lineBytes;
    return this.model.device.totalMemoryBytes + this.rng.nextInt(lines) * this.model.l2.segment.lineBytes;
  }

  /** A seed for one slice's eviction hash. */
  sliceSeed(): number {
    return this.rng.fork();
  }

  private nextRunCycles(): number {
    if (!Number.isFinite(this.meanRunCycles)) return Infinity;
    return -Math.log(1 - this.rng.next()) * this.meanRunCycles;
  }
}
