import type { BandwidthArgs, BandwidthCopyResult, BandwidthResult, DeviceProperties } from '../../protocol/ops.js';
import type { GpuModel } from './model.js';
import type { SimulatedDevice } from './simulated-device.js';
import { validateBandwidth, validateBandwidthCopy } from '../../protocol/validate.js';

/** 16-byte accesses each thread of the native bandwidth kernels keeps in flight (native/probe/src/bandwidth.cu kUnroll). */
export const VECTORS_IN_FLIGHT_PER_THREAD = 4;
const VECTOR_BYTES = 16;
/** Relative stdev of one simulated launch's time. */
const LAUNCH_JITTER = 0.02;

/** Which level streams the array: the L2 when it fits one segment (every SM's reads can stay near), device memory otherwise. */
function levelOf(model: GpuModel, arrayBytes: number): { peakRead: number; peakWrite: number; latencyCycles: number } {
  if (arrayBytes <= model.l2.segment.sizeBytes) {
    const { l2 } = model;
    return {
      peakRead: l2.readBandwidthBytesPerS,
      peakWrite: l2.writeBandwidthBytesPerS,
      latencyCycles: (l2.nearHitLatencyCycles + l2.farHitLatencyCycles) / 2,
    };
  }
  const { deviceMemory } = model;
  return {
    peakRead: deviceMemory.readBandwidthBytesPerS,
    peakWrite: deviceMemory.writeBandwidthBytesPerS,
    latencyCycles: deviceMemory.latencyCycles,
  };
}

/**
 * The rate one launch streams at, noise-free: blocks dealt breadth-first
 * over the SMs, as many resident on an SM as its thread and block limits
 * allow; each SM moves what its threads keep in flight per round trip of
 * the level's latency (Little's law), at most model.bandwidth.smBytesPerCycle;
 * the level caps the sum at its read or write peak.
 */
export function modelledBytesPerSecond(
  model: GpuModel,
  args: Required<Pick<BandwidthArgs, 'mode' | 'arrayBytes' | 'blocks' | 'threadsPerBlock'>>,
): number {
  const { device } = model;
  const smsUsed = Math.min(args.blocks, device.multiprocessorCount);
  const blocksPerSm = Math.ceil(args.blocks / device.multiprocessorCount);
  const fitPerSm = Math.min(
    device.maxBlocksPerMultiprocessor ?? 32,
    Math.floor((device.maxThreadsPerMultiprocessor ?? args.threadsPerBlock) / args.threadsPerBlock),
  );
  const vectorsPerSm = Math.ceil(args.arrayBytes / VECTOR_BYTES / smsUsed);
  const threadsPerSm = Math.min(Math.min(blocksPerSm, Math.max(1, fitPerSm)) * args.threadsPerBlock, vectorsPerSm);
  const level = levelOf(model, args.arrayBytes);
  const latencyS = level.latencyCycles / model.clock.smClockHz;
  const perSm = Math.min(
    model.bandwidth.smBytesPerCycle * model.clock.smClockHz,
    (threadsPerSm * VECTORS_IN_FLIGHT_PER_THREAD * VECTOR_BYTES) / latencyS,
  );
  return Math.min(args.mode === 'read' ? level.peakRead : level.peakWrite, smsUsed * perSm);
}

/** The streaming ops of the simulated GPU (bandwidth, bandwidth.copy), with the native probe's semantics. */
export class SimulatedBandwidth {
  constructor(
    private readonly device: SimulatedDevice,
    private readonly properties: DeviceProperties,
  ) {}

  /** One launch per repetition: the launch overhead plus `passes` passes at the modelled rate; the .cg hint changes nothing for arrays the L1 cannot hold. */
  bandwidth(raw: unknown): BandwidthResult {
    const args = validateBandwidth(raw, this.properties);
    const model = this.device.model;
    const bytes = args.arrayBytes * (args.passes ?? 1);
    return this.timed(bytes, args.repetitions, model.launchOverheadS + bytes / modelledBytesPerSecond(model, args));
  }

  /** A device-to-device copy: arrayBytes read and written at model.bandwidth.copyBytesPerS (both counted). */
  copy(raw: unknown): BandwidthCopyResult {
    const args = validateBandwidthCopy(raw, this.properties);
    const model = this.device.model;
    return this.timed(args.arrayBytes, args.repetitions, model.launchOverheadS + (2 * args.arrayBytes) / model.bandwidth.copyBytesPerS);
  }

  private timed(bytesPerRepetition: number, repetitions: number, seconds: number): BandwidthResult {
    const secondsPerRepetition = Array.from({ length: repetitions }, () =>
      this.device.timeSliced(Math.max(1e-7, this.device.jitter(seconds, LAUNCH_JITTER))),
    );
    // The timed launches (the untimed warm-up is left out, as before passes existed).
    this.device.addSeconds(secondsPerRepetition.reduce((sum, value) => sum + value, 0));
    return { bytesPerRepetition, secondsPerRepetition };
  }
}
