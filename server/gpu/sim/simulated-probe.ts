import { ProbeError } from '../../protocol/probe-error.js';
import {
  PROBE_PROTOCOL_VERSION,
  type CalibrateResult,
  type ChaseLaunchInfo,
  type ConsumerSelfTestResult,
  type DeviceProperties,
  type HelloResult,
  type PchaseArgs,
  type PchaseBatchResult,
  type PchasePairResult,
  type PchaseResult,
  type MemorySpace,
  type ProbeOp,
} from '../../protocol/ops.js';
import { createChaseArray, elementAfter, walk, type ChaseArray, type WorkSlicer, writeChain } from './chase.js';
import { SimulatedBandwidth } from './bandwidth.js';
import { SimulatedCompute } from './compute.js';
import { simulateL2Farnear, simulateL2Persist } from './l2-farnear.js';
import { simulateL2Partition } from './l2-partition.js';
import { simulateTraffic } from './traffic.js';
import { chaseLaunch, type ChaseLaunch } from './launch.js';
import type { SimulatedDevice } from './simulated-device.js';
import {
  validateCalibrate,
  validateConsumerSelfTest,
  validateHello,
  validatePchase,
  validatePchaseBatch,
  validatePchasePair,
} from '../../protocol/validate.js';

export const SIM_PROBE_VERSION = 'sim-1';
/** Threads of a native chase block that walk a warm-up lap together (native/probe/src/pchase.cu). */
const WARMUP_THREADS = 1024;
const SIM_RUNTIME_VERSION = 13000;

export interface SimulatedDeviceIdentity {
  index: number;
  uuid: string;
  name: string;
  pciBusId: string | null;
}

/**
 * The probe's operations answered by the simulated GPU, with the native
 * probe's semantics (server/protocol/ops.ts). Transport-agnostic: the channel
 * and the stdio adapter both call `handle`.
 */
export class SimulatedProbe {
  readonly properties: DeviceProperties;
  private readonly compute: SimulatedCompute;
  private readonly streaming: SimulatedBandwidth;

  constructor(
    private readonly device: SimulatedDevice,
    identity: SimulatedDeviceIdentity,
  ) {
    this.properties = { ...identity, ...device.model.device };
    this.compute = new SimulatedCompute(device, this.properties);
    this.streaming = new SimulatedBandwidth(device, this.properties);
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
    bandwidth: (args) => this.streaming.bandwidth(args),
    'bandwidth.copy': (args) => this.streaming.copy(args),
    calibrate: (args) => this.calibrate(args),
    'selftest.consumer': (args, slicer) => this.consumerSelfTest(args, slicer),
    'compute.smid': (args) => this.compute.smid(args),
    'cluster.limits': (args) => this.compute.limitsResult(args),
    'cluster.sync': (args) => this.compute.sync(args),
    'cluster.dsmem': (args) => this.compute.dsmem(args),
    'cluster.launch': (args) => this.compute.launch(args),
    'l2.partition': (args, slicer) => simulateL2Partition(this.device, this.properties, args, slicer),
    'l2.farnear': (args, slicer) => simulateL2Farnear(this.device, this.properties, args, slicer),
    'l2.persist': (args) => simulateL2Persist(this.device, this.properties, args),
    traffic: (args) => simulateTraffic(this.device, this.properties, args),
  };

  /** Simulated GPU time the ops so far would have taken (not part of the protocol; for benchmarks). */
  simulatedDeviceSeconds(): number {
    return this.device.simulatedDeviceSeconds();
  }

  /** Loads walked so far, warm-ups included. */
  loadCount(): number {
    return this.device.loadCount;
  }

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

  /**
   * Builds the chains (left dirty in the L2) or flushes the L2 when asked
   * (which leaves it empty, built chains or not), and starts the launch: the SMs' L1 and constant caches cold, the L1 sized by
   * the carveout.
   */
  private async begin(
    launch: ChaseLaunch,
    smIds: readonly number[],
    chains: ReadonlyArray<[MemorySpace, ChaseArray]>,
    slicer: WorkSlicer,
  ): Promise<void> {
    if (launch.info.flushedL2) this.device.flushL2();
    else for (const [space, array] of chains) await writeChain(this.device, space, array, slicer);
    this.device.setL2FetchGranularity(launch.info.l2FetchGranularityBytes);
    this.device.startLaunch(smIds, launch.l1Bytes);
  }

  /** One launch's end: the fetch-granularity limit restored; its simulated time (launch overhead, walked cycles at the SM clock). */
  private finish(cycles: number): void {
    this.device.setL2FetchGranularity(undefined);
    const model = this.device.model;
    this.device.addSeconds(model.launchOverheadS + cycles / model.clock.smClockHz);
  }

  /**
   * A warm-up lap over the chain, as the native probe walks it: every thread
   * of the chaser's block loads its share, independently, so the lap costs
   * the walked cycles spread over the block (cache state as one lap).
   */
  private async warmUp(smId: number, space: MemorySpace, array: ChaseArray, slicer: WorkSlicer): Promise<number> {
    const before = this.device.loadCycles;
    await walk(this.device, smId, space, array, { loads: array.elementCount, threads: WARMUP_THREADS }, slicer);
    return (this.device.loadCycles - before) / WARMUP_THREADS;
  }

  private async pchase(raw: unknown, slicer: WorkSlicer): Promise<PchaseResult> {
    const args = validatePchase(raw, this.properties);
    const { smId, launch, result } = await this.oneChaser(args, slicer, (sm, array) =>
      walk(this.device, sm, args.space, array, { loads: args.samples, record: args.samples }, slicer),
    );
    return { smId, latenciesCycles: result, launch };
  }

  /** One chaser's launch on one SM: its chain built (or the L2 flushed), the warm-up lap when asked, then `timed`; the launch's time counted. */
  private async oneChaser<T>(
    args: PchaseArgs,
    slicer: WorkSlicer,
    timed: (smId: number, array: ChaseArray) => Promise<T>,
  ): Promise<{ smId: number; launch: ChaseLaunchInfo; result: T }> {
    const smId = args.smId ?? 0;
    const launch = chaseLaunch(this.device.model, [args], args.samples, args);
    const array = createChaseArray(this.device, args);
    await this.begin(launch, [smId], [[args.space, array]], slicer);
    const warmupCycles = args.warmup ? await this.warmUp(smId, args.space, array, slicer) : 0;
    const before = this.device.loadCycles;
    const result = await timed(smId, array);
    this.finish(warmupCycles + this.device.loadCycles - before);
    return { smId, launch: launch.info, result };
  }

  /**
   * One chaser per size, chaser i on SM i: all warm up, then all are timed
   * (they share the L2). The chasers run at once, so the launch takes as
   * long as its slowest chaser.
   */
  private async pchaseBatch(raw: unknown, slicer: WorkSlicer): Promise<PchaseBatchResult> {
    const args = validatePchaseBatch(raw, this.properties);
    const chains = args.arrayBytesList.map((arrayBytes) => ({ space: args.space, arrayBytes }));
    const launch = chaseLaunch(this.device.model, chains, args.samples, args);
    const arrays = args.arrayBytesList.map((arrayBytes, index) =>
      createChaseArray(this.device, { ...args, arrayBytes, seed: ((args.seed ?? 0) + index) >>> 0 }),
    );
    await this.begin(
      launch,
      arrays.map((_, smId) => smId),
      arrays.map((array) => [args.space, array] as [MemorySpace, ChaseArray]),
      slicer,
    );
    const chaserCycles = arrays.map(() => 0);
    const timed = async (smId: number, plan: Parameters<typeof walk>[4]) => {
      const before = this.device.loadCycles;
      const recorded = await walk(this.device, smId, args.space, arrays[smId]!, plan, slicer);
      chaserCycles[smId]! += this.device.loadCycles - before;
      return recorded;
    };
    if (args.warmup) {
      for (const [smId, array] of arrays.entries()) chaserCycles[smId]! += await this.warmUp(smId, args.space, array, slicer);
    }
    const series: PchaseBatchResult['series'] = [];
    for (let smId = 0; smId < arrays.length; smId += 1) {
      const latenciesCycles = await timed(smId, { loads: args.samples, record: args.samples });
      series.push({ arrayBytes: args.arrayBytesList[smId]!, smId, latenciesCycles });
    }
    this.finish(Math.max(...chaserCycles));
    return { series, launch: launch.info };
  }

  /** Thesis §4 (amount, sharing): first fills, second walks, first is re-read timed. */
  private async pchasePair(raw: unknown, slicer: WorkSlicer): Promise<PchasePairResult> {
    const args = validatePchasePair(raw, this.properties);
    const firstSmId = args.smIds?.[0] ?? 0;
    const sameSm = args.placement === 'same-sm';
    const secondSmId = sameSm ? firstSmId : (args.smIds?.[1] ?? 1);
    const launch = chaseLaunch(this.device.model, [args.first, args.second], args.samples, { ...args, oneBlock: sameSm });
    const seed = args.seed ?? 0;
    const first = createChaseArray(this.device, { ...args.first, seed });
    const second = createChaseArray(this.device, { ...args.second, seed: (seed + 1) >>> 0 });
    const chains: Array<[MemorySpace, ChaseArray]> = [
      [args.first.space, first],
      [args.second.space, second],
    ];
    await this.begin(launch, sameSm ? [firstSmId] : [firstSmId, secondSmId], chains, slicer);
    const before = this.device.loadCycles;
    await walk(this.device, firstSmId, args.first.space, first, { loads: first.elementCount }, slicer);
    const secondLoads = Math.max(second.elementCount, args.samples);
    const secondLatenciesCycles = await walk(
      this.device,
      secondSmId,
      args.second.space,
      second,
      { loads: secondLoads, record: args.samples },
      slicer,
    );
    const firstLatenciesCycles = await walk(
      this.device,
      firstSmId,
      args.first.space,
      first,
      { loads: args.samples, record: args.samples },
      slicer,
    );
    this.finish(this.device.loadCycles - before);
    return { firstSmId, secondSmId, firstLatenciesCycles, secondLatenciesCycles, launch: launch.info };
  }

  /**
   * One launch as the native self-test runs it: the warm-up (when asked),
   * `samples` loads timed as pchase times them, then the chain's next
   * `samples` loads timed by a stop clock that does not wait, which shows
   * the model's unconsumed issue cost instead of each load's latency.
   */
  private async consumerSelfTest(raw: unknown, slicer: WorkSlicer): Promise<ConsumerSelfTestResult> {
    const args = validateConsumerSelfTest(raw, this.properties);
    const { smId, launch, result } = await this.oneChaser(args, slicer, async (sm, array) => {
      const timed = { loads: args.samples, record: args.samples };
      const consumed = await walk(this.device, sm, args.space, array, timed, slicer);
      const from = elementAfter(array, 0, args.samples);
      const unconsumedCycles = this.device.model.unconsumedCycles[args.space];
      return { consumed, unconsumed: await walk(this.device, sm, args.space, array, { ...timed, from, unconsumedCycles }, slicer) };
    });
    return { smId, consumedLatenciesCycles: result.consumed, unconsumedLatenciesCycles: result.unconsumed, launch };
  }

  private calibrate(raw: unknown): CalibrateResult {
    validateCalibrate(raw);
    this.device.addSeconds(this.device.model.launchOverheadS);
    const clock = this.device.model.clock;
    return { clockReadOverheadCycles: clock.clockReadOverheadCycles, smClockHz: Math.round(this.device.jitter(clock.smClockHz, 1e-4)) };
  }
}
