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
import type { ProbeErrorCode } from '../model/probe-error-code.js';

export const PROBE_PROTOCOL_VERSION = 1;

/** Memory spaces a pointer chase can walk (thesis §4: one load flavour each). */
/** `global`: a plain global load with no cache operator, cached wherever the GPU caches global loads by default. */
export const MEMORY_SPACES = ['global.ca', 'global.cg', 'readonly', 'texture', 'constant', 'shared', 'global'] as const;
export type MemorySpace = (typeof MEMORY_SPACES)[number];

export type ChasePattern = 'sequential' | 'random';

/** Stable error codes a backend answers with: server/model/probe-error-code.ts (errors.ts maps them without importing the protocol). */
export type { ProbeErrorCode };

/** One device as the hello reports it; its schema is part of the topology document's contract (server/model/device-schema.ts). */
export type { DeviceProperties };

export type HelloArgs = {};
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
  /**
   * different-sm only: the SMs (%smid) that run first and second, 2 distinct
   * ids in [0, multiprocessorCount - 1]. The probe then launches several
   * blocks per SM and the first block on each chosen SM chases (the rest
   * exit); a chosen SM that runs no block is answered `unsupported` ("sm N
   * never ran a block"). Absent: two blocks wherever the scheduler puts them.
   */
  smIds?: [number, number];
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

/**
 * Streaming bandwidth: `blocks` × `threadsPerBlock` threads stream the array in
 * 16-byte accesses, `passes` grid-stride passes inside one launch (so a small
 * L2-resident array is not bound by the launch), timed with events after one
 * untimed warm-up launch; one launch per repetition. Reads keep four 16-byte
 * loads in flight per thread. Writes store whole 16-byte vectors, a warp 512
 * contiguous bytes, so every 32 B sector is written in full and the L2 needs
 * no read-for-fill from device memory.
 * Validation (server/protocol/validate.ts): passes in [1, 4096], default 1;
 * arrayBytes × passes ≤ 2^40; cacheHint ∈ {default, cg}, default default,
 * and cg with mode read only.
 */
export interface BandwidthArgs {
  mode: 'read' | 'write';
  arrayBytes: number;
  blocks: number;
  threadsPerBlock: number;
  repetitions: number;
  passes?: number;
  /** Read flavour: 'default' (L1 and L2) or 'cg' (ld.global.cg: L2 only, for the L2's own rate). */
  cacheHint?: BandwidthCacheHint;
}
export const BANDWIDTH_CACHE_HINTS = ['default', 'cg'] as const;
export type BandwidthCacheHint = (typeof BANDWIDTH_CACHE_HINTS)[number];
export interface BandwidthResult {
  /** Bytes one repetition streams: arrayBytes × passes (bandwidth.copy: arrayBytes copied, read once and written once). */
  bytesPerRepetition: number;
  /** Event-timed seconds of each repetition. */
  secondsPerRepetition: number[];
}

/**
 * The reference device memory is held to: a device-to-device hipMemcpy of
 * `arrayBytes` (2 × arrayBytes of memory), event-timed after one untimed
 * warm-up copy. Its rate counts bytes read plus written: 2 × bytesPerRepetition.
 */
export interface BandwidthCopyArgs {
  arrayBytes: number;
  repetitions: number;
}
export type BandwidthCopyResult = BandwidthResult;

export interface CalibrateArgs {
  samples?: number;
}
export interface CalibrateResult {
  /** Cycles between two back-to-back clock reads (subtract from pchase latencies). */
  clockReadOverheadCycles: number;
  /** SM clock measured against the global nanosecond timer. */
  smClockHz: number;
}

/**
 * Compute topology and Hopper thread block clusters (issue 10;
 * shared/seeds/thread-block-cluster-paper.txt). Every `cluster.*` op, and
 * `compute.smid` with clusterSize > 1, needs thread block clusters (NVIDIA
 * compute capability 9.0+) and answers `unsupported` elsewhere. Launches
 * that place blocks on SMs give every block enough dynamic shared memory
 * that at most one block fits on an SM, so blocks and SMs count alike.
 */

/**
 * Which SM each block of one launch ran on (%smid): `clusters` clusters of
 * `clusterSize` blocks (1: a plain launch, any device). Every block waits
 * (bounded) until all blocks of the launch have arrived, so a launch that
 * fits runs all its blocks at once. Blocks of one cluster share a GPC: SMs
 * that never share a cluster are in different GPCs (the paper's method).
 */
export interface ComputeSmidArgs {
  clusterSize: number;
  clusters: number;
  repetitions: number;
}
export interface ComputeSmidResult {
  /** %nsmid: SM ids are below it (they may be sparse). */
  smIdLimit: number;
  /** One per repetition: block b's SM (cluster of block b: floor(b / clusterSize)); whether every block was resident at once. */
  launches: Array<{ smIds: number[]; coResident: boolean }>;
}

export type ClusterLimitsArgs = Record<string, never>;
export interface ClusterLimitsResult {
  /** cudaOccupancyMaxPotentialClusterSize without, and with, cudaFuncAttributeNonPortableClusterSizeAllowed. */
  maxPortableClusterSize: number;
  maxClusterSize: number;
  /** cudaOccupancyMaxActiveClusters for cluster sizes 1, 2, …, maxClusterSize (index = size - 1), one block per SM. */
  activeClusters: number[];
}

/** Barrier latencies in one cluster launch (paper Listing 2), timed by block 0's thread 0 with %clock; grid.sync in a cooperative launch of the same shape. */
export interface ClusterSyncArgs {
  clusterSize: number;
  threadsPerBlock: number;
  samples: number;
}
export interface ClusterSyncResult {
  /** barrier.cluster.arrive alone, barrier.cluster.wait after it, both (cluster.sync()), __syncthreads(), grid.sync(); clock-read overhead not subtracted. */
  arriveCycles: number[];
  waitCycles: number[];
  clusterSyncCycles: number[];
  syncthreadsCycles: number[];
  gridSyncCycles: number[];
}

/**
 * Distributed shared memory in a cluster of two blocks. Latency: block 0's
 * thread 0 chases a 4 KiB ring in its own shared memory, in block 1's
 * (mapa + ld.shared::cluster) and in global memory through the L2 (.cg,
 * after an untimed lap), timed as pchase times loads. Transfers of
 * `transferBytes` in 64-bit words by `threadsPerBlock` threads, block 1 to
 * block 0 (paper Fig. 2), each timed by block 0 from a cluster barrier
 * through the producer's writes, a barrier, the consumer's reads and a
 * barrier: push (block 1 stores into block 0's shared memory), pull (block 0
 * loads from block 1's), global (through global memory).
 */
export interface ClusterDsmemArgs {
  samples: number;
  transferBytes: number;
  threadsPerBlock: number;
  repetitions: number;
}
export interface ClusterDsmemResult {
  /** SM of block 0 (the reader) and block 1. */
  smIds: number[];
  localLatenciesCycles: number[];
  remoteLatenciesCycles: number[];
  l2LatenciesCycles: number[];
  /** SM cycles of one transfer of transferBytes, per repetition. */
  pushCycles: number[];
  pullCycles: number[];
  globalCycles: number[];
}

/** The same grid of `blocks` blocks (each spinning `spinNs`, one per SM at a time) launched in clusters of `clusterSize` and plainly, event-timed (paper Listing 1). */
export interface ClusterLaunchArgs {
  clusterSize: number;
  blocks: number;
  spinNs: number;
  repetitions: number;
}
export interface ClusterLaunchResult {
  clusterSecondsPerRepetition: number[];
  plainSecondsPerRepetition: number[];
}

/**
 * The L2's partitions as every SM sees them (issue 9, "the L2 as it really
 * is"), in one launch of one block per SM. The L2 is split in partitions; each
 * chunk of memory is homed in one by an address hash, and an SM reaches one
 * partition faster than the other, so one SM's L2 hits fall in two latency
 * classes, and SMs wired to different partitions see opposite patterns. Each
 * block's thread 0 walks its chunks (one `.cg` load per `strideBytes`): it
 * loads the chunk untimed (its own touch, whatever other SMs left), waits,
 * then times a second load of the same address, as pchase times loads.
 * - `mode` 'shared': every SM reads the same array, so chunk c is one address
 *   for all SMs and their near/far patterns compare chunk by chunk (block b
 *   starts at chunk b × chunks / blocks, so SMs do not queue on one chunk).
 *   'private': every SM reads its own array (disjoint slices of one allocation).
 * - `arrayBytes` (default 512 KiB): an integer in [4, 2^52], a multiple of 4;
 *   `strideBytes` (default 256, the homing unit) an integer in
 *   [4, min(arrayBytes, 1 MiB)], a multiple of 4; arrayBytes / strideBytes ≤
 *   8192 chunks (one latency each is buffered in shared memory).
 * - Memory: arrayBytes (shared) or arrayBytes × multiprocessorCount (private).
 */
export interface L2PartitionArgs {
  mode: 'private' | 'shared';
  arrayBytes?: number;
  strideBytes?: number;
}
export interface L2PartitionResult {
  mode: 'private' | 'shared';
  arrayBytes: number;
  strideBytes: number;
  /** One per block, in launch order: its SM and one latency per chunk, in address order (chunk c at c × strideBytes), clock-read overhead not subtracted. */
  sms: Array<{ smId: number; latenciesCycles: number[] }>;
}

/**
 * The L2 past one partition and device memory, as one or two chosen SMs see
 * them chunk by chunk (issue 9). Every pass touches each 128 B line of the
 * array with one `.cg` load; on the last (timed) pass the first line of each
 * chunk is loaded timed. The chosen SMs take turns, never walking at once:
 * - `shared` false: each SM walks its own array, all its passes, then the next SM;
 * - `shared` true: one array; every SM does its warm passes in turn, then
 *   every SM its timed pass in turn, so the first SM's timed pass follows the
 *   second SM's walk of the same lines (does the first SM's copy survive?).
 * One block per SM; blocks on other SMs exit at once. A chosen SM that never
 * runs a block is answered `unsupported` ("sm N never ran a block").
 * - `smIds`: 1 or 2 distinct integers, each in [0, multiprocessorCount - 1].
 * - `arrayBytes`: an integer in [128, 2^52], a multiple of 128; `strideBytes`
 *   (default 256) an integer in [128, min(arrayBytes, 1 MiB)], a multiple of
 *   128; arrayBytes / strideBytes ≤ 8192 chunks.
 * - `passes` (default 2: one warm, one timed) an integer in [2, 16].
 * - Memory: arrayBytes (shared) or arrayBytes × smIds.length.
 */
export interface L2FarnearArgs {
  smIds: number[];
  arrayBytes: number;
  strideBytes?: number;
  passes?: number;
  shared: boolean;
}
export interface L2FarnearResult {
  arrayBytes: number;
  strideBytes: number;
  passes: number;
  shared: boolean;
  /** In smIds order: one latency per chunk, address order (chunk c at c × strideBytes), clock-read overhead not subtracted. */
  sms: Array<{ smId: number; latenciesCycles: number[] }>;
}

/**
 * What a persisting L2 access-policy window keeps (CUDA 11+, NVIDIA sm_80+).
 * An array is streamed twice (one `.cg` load per 128 B line, many threads),
 * then `samples` lines of its first windowBytes are loaded timed (sample i at
 * floor(i × windowBytes / samples / 128) × 128); once without a window, then
 * once with a persisting window over those bytes (hitProp persisting, missProp
 * streaming, cudaLimitPersistingL2CacheSize set to windowBytes). The device's
 * persisting limit is read first and restored on every path; persisting lines
 * are reset after.
 * - `arrayBytes` an integer in [128, 2^52], a multiple of 128;
 *   `windowBytes` an integer in [128, min(arrayBytes, 2^32)], a multiple of 128;
 *   `hitRatio` a number in (0, 1]; `samples` an integer in [1, 8192].
 * - Device: windowBytes ≤ persistingL2CacheMaxBytes (when the device has one).
 * - Memory: arrayBytes. Capability: `unsupported` without a persisting L2
 *   (persistingL2CacheMaxBytes 0 or null: AMD, MIG) or where the runtime refuses the window.
 */
export interface L2PersistArgs {
  arrayBytes: number;
  windowBytes: number;
  hitRatio: number;
  samples: number;
}
export interface L2PersistResult {
  arrayBytes: number;
  windowBytes: number;
  hitRatio: number;
  samples: number;
  /** The set-aside the runtime granted for windowBytes (read back). */
  persistingLimitBytes: number;
  /** One latency per sample, clock-read overhead not subtracted: without the window, then with it. */
  withoutCycles: number[];
  withCycles: number[];
}

/**
 * The bytes that really move between the L2 and device memory for a strided
 * access pattern (LLC-memory traffic paper, issue 20). For each case one
 * kernel makes `accesses` = ceil(footprintBytes / elementBytes / strideElements)
 * accesses, neighbouring threads taking neighbouring accesses, element k at
 * k × strideElements: `read` (a[i]), `write` (c[i] = v), `rmw`
 * (c[i] = c[i] + 1), `vecmul` (c[i] = a[i] × b[i], the paper's kernel). The
 * written array c is `fresh` (allocated for the case, never written) or
 * `written` (filled first; the default). Every case runs between two L2
 * flushes (reads of flushBytes = 4 × the L2): nothing of the arrays is in the
 * L2 when the pattern starts, and the second flush writes back what it left
 * dirty.
 * - `method` counters: the Range Profiler (CUPTI, loaded at run time) counts
 *   `metrics` for each of the three kernels (flush before, the pattern, flush
 *   after). `unsupported` where CUPTI is missing (TOPOD_CUPTI_PATH overrides
 *   the search), profiling is restricted to administrators, or on AMD; a
 *   metric the GPU does not count is `bad_request`.
 * - `method` timing: `repetitions` launches of the pattern timed with events
 *   (target prepared and L2 flushed before each, untimed), after one warm-up.
 * - `footprintBytes` an integer in [16, 2^52], a multiple of 16; `cases` 1 to
 *   256 of { pattern, elementBytes ∈ {4, 8, 16}, strideElements in
 *   [1, footprintBytes / elementBytes], target }; `repetitions` in [1, 1000]
 *   (default 3); `metrics` 1 to 16 names of [a-z0-9_.] (default
 *   TRAFFIC_DEFAULT_METRICS); `l2FetchGranularityBytes` ∈ {32, 64, 128}
 *   (cudaLimitMaxL2FetchGranularity for the request, restored after).
 * - Memory: 3 × footprintBytes + flushBytes.
 */
export const TRAFFIC_PATTERNS = ['read', 'write', 'rmw', 'vecmul'] as const;
export type TrafficPattern = (typeof TRAFFIC_PATTERNS)[number];
export const TRAFFIC_TARGETS = ['fresh', 'written'] as const;
export type TrafficTarget = (typeof TRAFFIC_TARGETS)[number];
export const TRAFFIC_METHODS = ['counters', 'timing'] as const;
export type TrafficMethod = (typeof TRAFFIC_METHODS)[number];
export const TRAFFIC_ELEMENT_BYTES = [4, 8, 16] as const;
export const TRAFFIC_DEFAULT_METRICS = [
  'dram__bytes_read.sum',
  'dram__bytes_write.sum',
  'lts__t_sectors_op_read.sum',
  'lts__t_sectors_op_write.sum',
] as const;
export interface TrafficCase {
  pattern: TrafficPattern;
  elementBytes: number;
  strideElements: number;
  target?: TrafficTarget;
}
export interface TrafficArgs {
  method: TrafficMethod;
  footprintBytes: number;
  cases: TrafficCase[];
  repetitions?: number;
  metrics?: string[];
  l2FetchGranularityBytes?: number;
}
export interface TrafficCaseResult {
  pattern: TrafficPattern;
  elementBytes: number;
  strideElements: number;
  target: TrafficTarget;
  accesses: number;
  /** counters: one value per metric (TrafficResult.metrics order) for the flush before, the pattern kernel, the flush after. */
  before?: number[];
  during?: number[];
  after?: number[];
  /** counters: CUPTI's name of the pattern kernel's range. */
  kernel?: string;
  /** timing: seconds of each timed launch. */
  secondsPerRepetition?: number[];
}
export interface TrafficResult {
  method: TrafficMethod;
  footprintBytes: number;
  flushBytes: number;
  /** cudaLimitMaxL2FetchGranularity while the cases ran; null where the runtime has none (AMD). */
  l2FetchGranularityBytes: number | null;
  /** counters only: the metric names, the replay passes they need, the libcupti loaded, CUPTI's chip name. */
  metrics?: string[];
  passes?: number;
  library?: string;
  chip?: string;
  cases: TrafficCaseResult[];
}

export interface ProbeOps {
  hello: { args: HelloArgs; result: HelloResult };
  pchase: { args: PchaseArgs; result: PchaseResult };
  'pchase.batch': { args: PchaseBatchArgs; result: PchaseBatchResult };
  'pchase.pair': { args: PchasePairArgs; result: PchasePairResult };
  bandwidth: { args: BandwidthArgs; result: BandwidthResult };
  'bandwidth.copy': { args: BandwidthCopyArgs; result: BandwidthCopyResult };
  calibrate: { args: CalibrateArgs; result: CalibrateResult };
  'selftest.consumer': { args: ConsumerSelfTestArgs; result: ConsumerSelfTestResult };
  'compute.smid': { args: ComputeSmidArgs; result: ComputeSmidResult };
  'cluster.limits': { args: ClusterLimitsArgs; result: ClusterLimitsResult };
  'cluster.sync': { args: ClusterSyncArgs; result: ClusterSyncResult };
  'cluster.dsmem': { args: ClusterDsmemArgs; result: ClusterDsmemResult };
  'cluster.launch': { args: ClusterLaunchArgs; result: ClusterLaunchResult };
  'l2.partition': { args: L2PartitionArgs; result: L2PartitionResult };
  'l2.farnear': { args: L2FarnearArgs; result: L2FarnearResult };
  'l2.persist': { args: L2PersistArgs; result: L2PersistResult };
  traffic: { args: TrafficArgs; result: TrafficResult };
}
export type ProbeOp = keyof ProbeOps;
export const PROBE_OPS: readonly ProbeOp[] = [
  'hello',
  'pchase',
  'pchase.batch',
  'pchase.pair',
  'bandwidth',
  'bandwidth.copy',
  'calibrate',
  'selftest.consumer',
  'compute.smid',
  'cluster.limits',
  'cluster.sync',
  'cluster.dsmem',
  'cluster.launch',
  'l2.partition',
  'l2.farnear',
  'l2.persist',
  'traffic',
];

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
