import { ProbeError } from '../backend.js';
import {
  PROBE_PROTOCOL_VERSION,
  type BandwidthResult,
  type CalibrateResult,
  type DeviceProperties,
  type HelloResult,
  type PchaseBatchResult,
  type PchasePairResult,
  type PchaseResult,
  type ProbeOp,
} from '../protocol.js';
import { createChaseArray, walk, type WorkSlicer } from './chase.js';
import type { SimulatedDevice } from './simulated-device.js';
import { validateBandwidth, validateCalibrate, validateHello, validatePchase, validatePchaseBatch, validatePchasePair } from './validate.js';

export const SIM_PROBE_VERSION = 'sim-1';
const SIM_RUNTIME_VERSION = 13000;
/** Threads in flight per SM that saturate the memory system in the bandwidth model. */
const SATURATING_THREADS_PER_SM = 512;

export interface SimulatedDeviceIdentity {
  index: number;
  uuid: string;
  name: string;
  pciBusId: string | null;
}

/**
 * The probe's operations answered by the simulated GPU, with the native
 * probe's semantics (server/gpu/protocol.ts). Transport-agnostic: the channel
 * and the stdio adapter both call `handle`.
 */
export class SimulatedProbe {
  readonly properties: DeviceProperties;

  constructor(
    private readonly device: SimulatedDevice,
    identity: SimulatedDeviceIdentity,
  ) {
    this.properties = { ...identity, ...device.model.device };
  }

  /** The op table: `handle` dispatches through it and `hello` lists its keys, so the two cannot disagree. */
  private readonly ops: Readonly<Record<ProbeOp, (args: unknown, slicer: WorkSlicer) => unknown>> = {
    hello: (args) => {
      validateHello(args);
      return this.hello();
    },
    pchase: (args, slicer) => this.pchase(args, slicer),
    'pchase.batch': (args, slicer) => this.pchaseBatch(args, slicer),
    'pchase.pair': (args, slicer) => this.pchasePair(args, slicer),
    bandwidth: (args) => this.bandwidth(args),
    calibrate: (args) => this.calibrate(args),
  };

  async handle(op: string, args: unknown, slicer: WorkSlicer): Promise<unknown> {
    slicer.throwIfAborted();
    if (!Object.hasOwn(this.ops, op)) throw new ProbeError('unknown_op', `unknown op ${JSON.stringify(op)}`);
    return this.ops[op as ProbeOp](args, slicer);
  }

  private hello(): HelloResult {
    return {
      probeVersion: SIM_PROBE_VERSION,
      protocolVersion: PROBE_PROTOCOL_VERSION,
      vendor: 'nvidia',
      runtimeVersion: SIM_RUNTIME_VERSION,
      driverVersion: SIM_RUNTIME_VERSION,
      ops: Object.keys(this.ops),
      devices: [{ ...this.properties }],
    };
  }

  private async pchase(raw: unknown, slicer: WorkSlicer): Promise<PchaseResult> {
    const args = validatePchase(raw, this.properties);
    const smId = args.smId ?? 0;
    const array = createChaseArray(this.device, args);
    if (args.warmup) await walk(this.device, smId, args.space, array, array.elementCount, slicer);
    const latenciesCycles = await walk(this.device, smId, args.space, array, args.samples, slicer, args.samples);
    return { smId, latenciesCycles };
  }

  /** One chaser per size, chaser i on SM i: all warm up, then all are timed (they share the L2). */
  private async pchaseBatch(raw: unknown, slicer: WorkSlicer): Promise<PchaseBatchResult> {
    const args = validatePchaseBatch(raw, this.properties);
    const arrays = args.arrayBytesList.map((arrayBytes, index) =>
      createChaseArray(this.device, { ...args, arrayBytes, seed: ((args.seed ?? 0) + index) >>> 0 }),
    );
    if (args.warmup) {
      for (const [smId, array] of arrays.entries()) await walk(this.device, smId, args.space, array, array.elementCount, slicer);
    }
    const series: PchaseBatchResult['series'] = [];
    for (const [smId, array] of arrays.entries()) {
      const latenciesCycles = await walk(this.device, smId, args.space, array, args.samples, slicer, args.samples);
      series.push({ arrayBytes: args.arrayBytesList[smId]!, smId, latenciesCycles });
    }
    return { series };
  }

  /** Thesis §4 (amount, sharing): first fills, second walks, first is re-read timed. */
  private async pchasePair(raw: unknown, slicer: WorkSlicer): Promise<PchasePairResult> {
    const args = validatePchasePair(raw, this.properties);
    const firstSmId = 0;
    const secondSmId = args.placement === 'same-sm' ? firstSmId : 1;
    const seed = args.seed ?? 0;
    const first = createChaseArray(this.device, { ...args.first, seed });
    const second = createChaseArray(this.device, { ...args.second, seed: (seed + 1) >>> 0 });
    await walk(this.device, firstSmId, args.first.space, first, first.elementCount, slicer);
    const secondLoads = Math.max(second.elementCount, args.samples);
    const secondLatenciesCycles = await walk(this.device, secondSmId, args.second.space, second, secondLoads, slicer, args.samples);
    const firstLatenciesCycles = await walk(this.device, firstSmId, args.first.space, first, args.samples, slicer, args.samples);
    return { firstSmId, secondSmId, firstLatenciesCycles, secondLatenciesCycles };
  }

  private bandwidth(raw: unknown): BandwidthResult {
    const args = validateBandwidth(raw, this.properties);
    const model = this.device.model;
    const fitsL2Segment = args.arrayBytes <= model.l2.segment.sizeBytes;
    const level = fitsL2Segment ? model.l2 : model.deviceMemory;
    const peak = args.mode === 'read' ? level.readBandwidthBytesPerS : level.writeBandwidthBytesPerS;
    const threads = args.blocks * args.threadsPerBlock;
    const efficiency = Math.min(1, threads / (this.properties.multiprocessorCount * SATURATING_THREADS_PER_SM));
    const seconds = model.launchOverheadS + args.arrayBytes / (peak * efficiency);
    const secondsPerRepetition = Array.from({ length: args.repetitions }, () => Math.max(1e-7, this.device.jitter(seconds, 0.02)));
    return { bytesPerRepetition: args.arrayBytes, secondsPerRepetition };
  }

  private calibrate(raw: unknown): CalibrateResult {
    validateCalibrate(raw);
    const clock = this.device.model.clock;
    return { clockReadOverheadCycles: clock.clockReadOverheadCycles, smClockHz: Math.round(this.device.jitter(clock.smClockHz, 1e-4)) };
  }
}
