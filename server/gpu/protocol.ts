/**
 * The probe protocol: JSON lines between the daemon and a measurement backend
 * (the native `topod-probe` process or the simulated GPU). One request, one
 * response, ids echoed. Progress and logs go to stderr, never stdout.
 *
 *   → {"id":7,"op":"pchase","args":{...}}
 *   ← {"id":7,"ok":true,"result":{...}}
 *   ← {"id":7,"ok":false,"error":{"code":"bad_request","message":"arrayBytes must be > 0"}}
 *
 * The backend measures and decides nothing (DESIGN.md: the split that matters);
 * every interpretation lives in server/discovery and server/analysis.
 */
import type { DeviceProperties } from '../model/device-schema.js';

export const PROBE_PROTOCOL_VERSION = 1;

/** Memory spaces a pointer chase can walk (thesis §4: one load flavour each). */
export const MEMORY_SPACES = ['global.ca', 'global.cg', 'readonly', 'texture', 'constant', 'shared'] as const;
export type MemorySpace = (typeof MEMORY_SPACES)[number];

export type ChasePattern = 'sequential' | 'random';

/** Stable error codes a backend answers with. */
export type ProbeErrorCode =
  | 'bad_request' // malformed JSON, unknown field values, out-of-range numbers
  | 'unknown_op'
  | 'out_of_memory' // array larger than free device memory
  | 'kernel_fault' // a launch or a kernel failed; the probe exits after answering
  | 'timeout' // the operation overran its deadline
  | 'unsupported' // valid request this device cannot do (e.g. texture on a runtime without it)
  | 'internal'
  // Transport-level codes the daemon's channels raise (never sent by a probe):
  | 'cancelled' // the caller aborted the request
  | 'closed' // the channel was closed while the request was pending
  | 'crashed' // the probe process died mid-request
  | 'spawn_failed';

/** One device as the hello reports it; its schema is part of the topology document's contract (server/model/device-schema.ts). */
export type { DeviceProperties };

export interface HelloArgs {}
export interface HelloResult {
  probeVersion: string;
  protocolVersion: number;
  vendor: 'nvidia' | 'amd';
  /** Runtime API version as the runtime reports it (CUDA: 13000 = 13.0). */
  runtimeVersion: number;
  /** Driver API version the runtime reports (CUDA: 13000). NVML gives the driver *release* string. */
  driverVersion: number;
  /**
   * The operations this probe answers, read from its own op registry (hello
   * included). Discovery skips a benchmark whose ops are missing instead of
   * trying it. Probes before this field was added (and raw series they
   * recorded) leave it out: read its absence as "every op" (supportedOps).
   */
  ops: string[];
  devices: DeviceProperties[];
}

export interface PchaseArgs {
  space: MemorySpace;
  arrayBytes: number;
  strideBytes: number;
  pattern: ChasePattern;
  /** Walk the whole array once before timing (fills the caches). */
  warmup: boolean;
  /** Number of timed loads recorded. */
  samples: number;
  /** Run the chaser on this SM when the backend can place it; otherwise any. */
  smId?: number;
  /** Seed for the random permutation. */
  seed?: number;
  /** Per-SM launch settings and the L2 flush (ChaseLaunchArgs). */
  flushL2?: boolean;
  carveoutPercent?: number;
  l2FetchGranularityBytes?: L2FetchGranularity;
}

/**
 * Settings every chase launch takes (pchase, pchase.batch, pchase.pair,
 * selftest.consumer), all optional:
 * - `flushL2` (default false): after the chains are built and before the
 *   walk, stream a buffer of twice the L2's size through it, so a cold walk
 *   does not find its chain (just written by the host or a kernel, so dirty
 *   in the L2) there (issue 8: "cold must be cold").
 * - `carveoutPercent` (integer 0..100): the unified L1/shared split the
 *   kernel prefers (cudaFuncAttributePreferredSharedMemoryCarveout). Default
 *   0 (as much L1 as possible, MT4G's PreferL1) unless a chain lives in
 *   shared memory (then 100). The driver still picks the smallest carveout
 *   step that fits the block's shared memory.
 */
export interface ChaseLaunchArgs {
  flushL2?: boolean;
  carveoutPercent?: number;
  l2FetchGranularityBytes?: L2FetchGranularity;
}

/**
 * cudaLimitMaxL2FetchGranularity for one launch (pchase, pchase.batch): how
 * many bytes device memory moves into the L2 per miss. Set for the launch
 * (a limit of the probe's own context, not a device setting) and restored
 * after; absent: the limit in force (hello: maxL2FetchGranularityBytes).
 * Validation: one of 32, 64, 128 → else bad_request.
 */
export const L2_FETCH_GRANULARITIES = [32, 64, 128] as const;
export type L2FetchGranularity = (typeof L2_FETCH_GRANULARITIES)[number];

/** What a chase launch ran under: recorded beside its latencies so the analysis knows the carveout (absent in series recorded before issue 8). */
export interface ChaseLaunchInfo {
  /** The carveout preference the kernel was launched with. */
  carveoutPercent: number;
  /** Dynamic plus static shared memory of one block (the driver adds its per-block reserve). */
  sharedBytesPerBlock: number;
  /** Whether the L2 was flushed between building the chains and the walk. */
  flushedL2: boolean;
  /** The L2 fetch-granularity limit set for the launch; absent when the limit in force was left alone. */
  l2FetchGranularityBytes?: number;
}

export interface PchaseResult {
  smId: number;
  /** One latency per timed load, in SM clock cycles, clock-read overhead not subtracted. */
  latenciesCycles: number[];
  launch?: ChaseLaunchInfo;
}

/** Many array sizes in one launch, one chaser per SM: per-SM caches measured in parallel. */
export interface PchaseBatchArgs {
  space: MemorySpace;
  arrayBytesList: number[];
  strideBytes: number;
  pattern: ChasePattern;
  warmup: boolean;
  samples: number;
  seed?: number;
  flushL2?: boolean;
  carveoutPercent?: number;
  l2FetchGranularityBytes?: L2FetchGranularity;
}
export interface PchaseBatchResult {
  series: Array<{ arrayBytes: number; smId: number; latenciesCycles: number[] }>;
  launch?: ChaseLaunchInfo;
}

export interface ChaserSpec {
  space: MemorySpace;
  arrayBytes: number;
  strideBytes: number;
  pattern?: ChasePattern;
  /** Warp index within the block (pair placed on the same SM). */
  warp?: number;
  /** Lane within the warp. */
  lane?: number;
}
/**
 * Two chasers ordered by barriers (thesis §4, amount and physical sharing):
 * 1. `first` walks its array (fills its cache);  2. `second` walks its array;
 * 3. `first` walks its array again, timed. Misses in step 3 mean `second`
 * evicted `first`'s lines: the two share a physical cache.
 */
export interface PchasePairArgs {
  first: ChaserSpec;
  second: ChaserSpec;
  placement: 'same-sm' | 'different-sm';
  samples: number;
  seed?: number;
  carveoutPercent?: number;
}
export interface PchasePairResult {
  firstSmId: number;
  secondSmId: number;
  /** The timed re-read of `first` (step 3). */
  firstLatenciesCycles: number[];
  /** `second`'s own walk (step 2), for reference. */
  secondLatenciesCycles: number[];
  launch?: ChaseLaunchInfo;
}

/**
 * Self-test of the timing method (issue 8): the same chase timed twice in one
 * launch, once with the stop clock waiting for the loaded value (what every
 * pchase op does: the value is stored before the second clock read) and once
 * without (the stop clock issues right after the load, as MT4G's L2, texture,
 * constant-L1 and device-memory kernels do). The gap is what an unconsumed
 * load hides. Same args as pchase (flushL2 applies to both walks' start).
 */
export type ConsumerSelfTestArgs = PchaseArgs;
export interface ConsumerSelfTestResult {
  smId: number;
  consumedLatenciesCycles: number[];
  unconsumedLatenciesCycles: number[];
  launch?: ChaseLaunchInfo;
}

export interface BandwidthArgs {
  mode: 'read' | 'write';
  arrayBytes: number;
  blocks: number;
  threadsPerBlock: number;
  repetitions: number;
}
export interface BandwidthResult {
  bytesPerRepetition: number;
  /** Event-timed seconds of each repetition. */
  secondsPerRepetition: number[];
}

export interface CalibrateArgs {
  samples?: number;
}
export interface CalibrateResult {
  /** Cycles between two back-to-back clock reads (subtract from pchase latencies). */
  clockReadOverheadCycles: number;
  /** SM clock measured against the global nanosecond timer. */
  smClockHz: number;
}

export interface ProbeOps {
  hello: { args: HelloArgs; result: HelloResult };
  pchase: { args: PchaseArgs; result: PchaseResult };
  'pchase.batch': { args: PchaseBatchArgs; result: PchaseBatchResult };
  'pchase.pair': { args: PchasePairArgs; result: PchasePairResult };
  bandwidth: { args: BandwidthArgs; result: BandwidthResult };
  calibrate: { args: CalibrateArgs; result: CalibrateResult };
  'selftest.consumer': { args: ConsumerSelfTestArgs; result: ConsumerSelfTestResult };
}
export type ProbeOp = keyof ProbeOps;
export const PROBE_OPS: readonly ProbeOp[] = ['hello', 'pchase', 'pchase.batch', 'pchase.pair', 'bandwidth', 'calibrate', 'selftest.consumer'];

/** What a hello says the probe can do; a hello without `ops` (an older probe, a recorded series) supports every protocol op. */
export function supportedOps(hello: Partial<Pick<HelloResult, 'ops'>>): ReadonlySet<string> {
  return new Set(Array.isArray(hello.ops) ? hello.ops : PROBE_OPS);
}

export interface ProbeRequest<O extends ProbeOp = ProbeOp> {
  id: number;
  op: O;
  args: ProbeOps[O]['args'];
}

export type ProbeResponse =
  | { id: number; ok: true; result: unknown }
  | { id: number | null; ok: false; error: { code: ProbeErrorCode; message: string } };
