/**
 * THE request-validation rules of the probe protocol (./ops.ts), applied
 * identically by the simulated GPU (which calls these functions) and the
 * native probe (native/probe/src/limits.h + *-op.cpp, which point back here).
 * Change a rule in both places; test/integration/probe/validation-contract.test.ts
 * sends the same bad requests to both and compares the error codes.
 *
 * Order — the first failing rule answers:
 *  1. Envelope: malformed JSON, a non-object request, an id that is not a
 *     non-negative safe integer, a non-string op → bad_request; an op not in
 *     the protocol → unknown_op; `args`, when present, not an object → bad_request.
 *  2. Fields that need no device → bad_request:
 *     - space ∈ MEMORY_SPACES; pattern ∈ {sequential, random} (required for
 *       pchase and pchase.batch, defaults to sequential for a pair's chasers);
 *       warmup a boolean (pchase, pchase.batch).
 *     - arrayBytes an integer in [4, 2^52], a multiple of 4.
 *     - strideBytes an integer in [4, arrayBytes], a multiple of 4.
 *     - samples (pchase family) an integer in [1, 8192]: the probe buffers
 *       every timed load's latency in shared memory, 4 bytes each.
 *     - seed, when present, an integer in [0, 2^32 - 1].
 *     - pchase.batch: arrayBytesList a non-empty array of arrayBytes values.
 *     - pchase.pair: first and second objects; placement ∈ {same-sm, different-sm};
 *       smIds, when present, an array of 2 distinct integers in [0, 2^32 - 1],
 *       and placement different-sm.
 *     - chase launches: carveoutPercent, when present, an integer in [0, 100];
 *       flushL2, when present, a boolean, and l2FetchGranularityBytes, when
 *       present, one of 32, 64, 128 (pchase, pchase.batch, selftest.consumer;
 *       a pair fills its caches itself and takes neither).
 *     - selftest.consumer: the fields of pchase.
 *     - bandwidth: mode ∈ {read, write}; arrayBytes an integer in [16, 2^52],
 *       a multiple of 16 (128-bit accesses); blocks in [1, 2^20];
 *       repetitions in [1, 1000]; passes, when present, in [1, 4096], and
 *       arrayBytes × passes ≤ 2^40 (one launch's bytes); cacheHint, when
 *       present, ∈ {default, cg}, and cg only with mode read.
 *     - bandwidth.copy: arrayBytes as bandwidth; repetitions in [1, 1000].
 *     - calibrate: samples, when present, an integer in [1, 1,000,000].
 *     - compute.smid: clusterSize an integer in [1, 16]; clusters in
 *       [1, 65536]; repetitions in [1, 64].
 *     - cluster.limits: no fields (args an object).
 *     - cluster.sync: clusterSize in [1, 16]; samples in [1, 8192].
 *     - cluster.dsmem: samples in [1, 8192]; transferBytes an integer in
 *       [8, 2^20], a multiple of 8 (64-bit words); repetitions in [1, 1000].
 *     - cluster.launch: clusterSize in [1, 16]; blocks in [1, 2^20], a
 *       multiple of clusterSize; spinNs in [0, 1,000,000]; repetitions in [1, 100].
 *     - l2.partition: mode ∈ {private, shared}; arrayBytes, when present, an
 *       integer in [4, 2^52], a multiple of 4 (default 512 KiB); strideBytes,
 *       when present, an integer in [4, min(arrayBytes, 2^20)], a multiple of
 *       4 (default 256); arrayBytes / strideBytes ≤ 8192 chunks.
 *     - l2.farnear: smIds an array of 1 or 2 distinct integers in [0, 2^32 - 1];
 *       arrayBytes an integer in [128, 2^52], a multiple of 128; strideBytes,
 *       when present, an integer in [128, min(arrayBytes, 2^20)], a multiple of
 *       128 (default 256); arrayBytes / strideBytes ≤ 8192 chunks; passes, when
 *       present, an integer in [2, 16] (default 2); shared a boolean.
 *     - l2.persist: arrayBytes an integer in [128, 2^52], a multiple of 128;
 *       windowBytes an integer in [128, min(arrayBytes, 2^32)], a multiple of
 *       128; hitRatio a number in (0, 1]; samples an integer in [1, 8192].
 *     - traffic (its validator is validateTraffic in ./validate-traffic.ts): method ∈
 *       {counters, timing}; footprintBytes an integer in [16, 2^52], a
 *       multiple of 16; cases 1 to 256 objects of pattern ∈ {read, write,
 *       rmw, vecmul}, elementBytes ∈ {4, 8, 16}, strideElements in
 *       [1, footprintBytes / elementBytes], target ∈ {fresh, written}
 *       (default written); repetitions, when present, in [1, 1000];
 *       metrics, when present, 1 to 16 names of [a-z0-9_.] (≤ 128 chars);
 *       l2FetchGranularityBytes, when present, one of 32, 64, 128.
 *  3. Device limits → bad_request (a probe that sees no GPU answers
 *     `unsupported` here, having checked everything above):
 *     - smId in [0, multiprocessorCount - 1]; at most multiprocessorCount
 *       sizes in arrayBytesList (one chaser per SM).
 *     - pair: warp in [0, maxThreadsPerBlock / warpSize - 1], lane in
 *       [0, warpSize - 1]; second.warp defaults to 1 for same-sm (0 otherwise);
 *       same-sm chasers must differ in warp or lane; different-sm needs 2 SMs;
 *       smIds each in [0, multiprocessorCount - 1].
 *     - constant-space arrays of one request together ≤ min(totalConstMemBytes, 64 KiB)
 *       (the probe's constant table).
 *     - shared-space arrays ≤ sharedMemPerBlockOptinBytes (else sharedMemPerBlockBytes),
 *       and one block's need ≤ that limit too: per chaser samples × 4 plus a
 *       4-byte sink word, plus its array when it is shared-space; pchase.batch and different-sm take the
 *       largest chaser, same-sm adds both; selftest.consumer as pchase (its
 *       two timed walks reuse one buffer).
 *     - bandwidth threadsPerBlock in [1, maxThreadsPerBlock].
 *     - compute.smid: clusters × clusterSize ≤ multiprocessorCount (one block per SM).
 *     - cluster.sync, cluster.dsmem: threadsPerBlock in [1, maxThreadsPerBlock];
 *       cluster.dsmem: transferBytes + 4104 (its 4 KiB latency ring and a
 *       sink word) ≤ the shared limit above.
 *     - l2.partition: chunks × 4 + 4 (latencies and sink) ≤ the shared limit above.
 *     - l2.farnear: every smId in [0, multiprocessorCount - 1].
 *     - l2.persist: windowBytes ≤ persistingL2CacheMaxBytes when that is positive.
 *  4. Memory → out_of_memory: the request's arrays summed (pchase.batch,
 *     pchase.pair; bandwidth adds its 4-byte-per-thread sink; bandwidth.copy
 *     needs its source and target, 2 × arrayBytes; l2.partition private
 *     mode arrayBytes × multiprocessorCount; l2.farnear arrayBytes, × smIds
 *     length unless shared; l2.persist arrayBytes; traffic 3 × footprintBytes
 *     plus its flush buffer, 4 × l2CacheSizeBytes) plus a 64 MiB
 *     runtime margin must fit in free device memory (the sim: totalMemoryBytes).
 *  5. Capability → unsupported: a chain over 2^34 - 4 bytes (32-bit element
 *     indices); a texture-space array over 2^27 elements (the probe also
 *     honours a smaller runtime maxTexture1DLinear). Thread block clusters
 *     (compute.smid with clusterSize > 1, every cluster.* op): a device
 *     without them (compute capability below 9.0, AMD), then a cluster larger
 *     than the device co-schedules (cluster.limits' maxClusterSize).
 *     l2.persist: a device without a persisting L2 (persistingL2CacheMaxBytes
 *     null or 0: AMD, MIG).
 */
import { ProbeError } from './probe-error.js';
import {
  L2_FETCH_GRANULARITIES,
  MEMORY_SPACES,
  BANDWIDTH_CACHE_HINTS,
  type BandwidthArgs,
  type BandwidthCopyArgs,
  type CalibrateArgs,
  type ChaseLaunchArgs,
  type ClusterDsmemArgs,
  type ClusterLaunchArgs,
  type ClusterLimitsArgs,
  type ClusterSyncArgs,
  type ComputeSmidArgs,
  type L2PartitionArgs,
  type L2FarnearArgs,
  type L2PersistArgs,
  type ChaserSpec,
  type ConsumerSelfTestArgs,
  type DeviceProperties,
  type MemorySpace,
  type PchaseArgs,
  type PchaseBatchArgs,
  type PchasePairArgs,
} from './ops.js';
import {
  CONSTANT_TABLE_BYTES,
  DEFAULT_FARNEAR_PASSES,
  DEFAULT_FARNEAR_STRIDE_BYTES,
  DEFAULT_PARTITION_ARRAY_BYTES,
  DEFAULT_PARTITION_STRIDE_BYTES,
  DSMEM_FIXED_SHARED_BYTES,
  FARNEAR_LINE_BYTES,
  MAX_ARRAY_BYTES,
  MAX_BANDWIDTH_BLOCKS,
  MAX_BANDWIDTH_LAUNCH_BYTES,
  MAX_BANDWIDTH_PASSES,
  MAX_CALIBRATE_SAMPLES,
  MAX_CHAIN_BYTES,
  MAX_CLUSTER_SIZE,
  MAX_FARNEAR_PASSES,
  MAX_FARNEAR_SMS,
  MAX_LAUNCH_BLOCKS,
  MAX_LAUNCH_REPETITIONS,
  MAX_PARTITION_STRIDE_BYTES,
  MAX_REPETITIONS,
  MAX_SAMPLES,
  MAX_SEED,
  MAX_SMID_CLUSTERS,
  MAX_SMID_REPETITIONS,
  MAX_SPIN_NS,
  MAX_TEXTURE_ELEMENTS,
  MAX_TRANSFER_BYTES,
  PERSIST_LINE_BYTES,
  RUNTIME_MARGIN_BYTES,
  SAMPLE_SHARED_BYTES,
  SINK_SHARED_BYTES,
} from './limits.js';

type Limits = Pick<
  DeviceProperties,
  | 'multiprocessorCount'
  | 'totalMemoryBytes'
  | 'totalConstMemBytes'
  | 'sharedMemPerBlockOptinBytes'
  | 'sharedMemPerBlockBytes'
  | 'maxThreadsPerBlock'
  | 'warpSize'
>;
/** What the cluster rules need beside the limits: the device's compute capability and the largest cluster it co-schedules (0: none). */
export type ClusterLimits = Limits &
  Pick<DeviceProperties, 'computeCapabilityMajor' | 'computeCapabilityMinor'> & { maxClusterSize: number };
type Fields = Record<string, unknown>;
type Chain = { space: MemorySpace; arrayBytes: number; strideBytes: number };

function badRequest(message: string): never {
  throw new ProbeError('bad_request', message);
}

function fields(value: unknown, what: string): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) badRequest(`${what} must be an object`);
  return value as Fields;
}

function checkInteger(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    badRequest(`${name} must be an integer in [${min}, ${max}], got ${JSON.stringify(value)}`);
  }
  return value;
}

function integer(source: Fields, key: string, min: number, max: number): number {
  return checkInteger(source[key], key, min, max);
}

function optionalInteger(source: Fields, key: string, min: number, max: number): number | undefined {
  return source[key] === undefined ? undefined : integer(source, key, min, max);
}

function multipleOf(value: number, name: string, unit: number): number {
  if (value % unit !== 0) badRequest(`${name} must be a multiple of ${unit}, got ${value}`);
  return value;
}

function oneOf<T extends string>(source: Fields, key: string, allowed: readonly T[], fallback?: T): T {
  const value = source[key] ?? fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    badRequest(`${key} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value as T;
}

function boolean(source: Fields, key: string): boolean {
  const value = source[key];
  if (typeof value !== 'boolean') badRequest(`${key} must be a boolean, got ${JSON.stringify(value)}`);
  return value;
}

/** Rule 2: one chain's size and stride. */
function chainShape(space: MemorySpace, rawArrayBytes: unknown, strideSource: Fields, name = 'arrayBytes'): Chain {
  const arrayBytes = multipleOf(checkInteger(rawArrayBytes, name, 4, MAX_ARRAY_BYTES), name, 4);
  const strideBytes = multipleOf(integer(strideSource, 'strideBytes', 4, arrayBytes), 'strideBytes', 4);
  return { space, arrayBytes, strideBytes };
}

function sharedLimitBytes(limits: Limits): number {
  return limits.sharedMemPerBlockOptinBytes ?? limits.sharedMemPerBlockBytes;
}

/** A chaser's shared-memory need: its latency buffer and sink word, plus its array when it lives in shared memory. */
export function chaserSharedBytes(chain: Pick<Chain, 'space' | 'arrayBytes'>, samples: number): number {
  return samples * SAMPLE_SHARED_BYTES + SINK_SHARED_BYTES + (chain.space === 'shared' ? chain.arrayBytes : 0);
}

/** Rule 3 for memory spaces: constant arrays together, each shared array, and one block's shared need. */
function checkSpaceLimits(chains: readonly Chain[], blockSharedBytes: number, limits: Limits): void {
  const constantLimit = Math.min(limits.totalConstMemBytes ?? CONSTANT_TABLE_BYTES, CONSTANT_TABLE_BYTES);
  const constantBytes = chains.filter((c) => c.space === 'constant').reduce((sum, c) => sum + c.arrayBytes, 0);
  if (constantBytes > constantLimit)
    badRequest(`constant-space arrays of ${constantBytes} bytes exceed the constant limit of ${constantLimit} bytes`);
  const sharedLimit = sharedLimitBytes(limits);
  for (const chain of chains) {
    if (chain.space === 'shared' && chain.arrayBytes > sharedLimit) {
      badRequest(`arrayBytes (${chain.arrayBytes}) exceeds the shared memory limit of ${sharedLimit} bytes`);
    }
  }
  if (blockSharedBytes > sharedLimit) {
    badRequest(
      `the chase needs ${blockSharedBytes} bytes of shared memory (samples and shared-space arrays); a block may use ${sharedLimit}`,
    );
  }
}

/** Rule 4. */
function checkFitsMemory(totalBytes: number, limits: Limits): void {
  if (totalBytes + RUNTIME_MARGIN_BYTES > limits.totalMemoryBytes) {
    throw new ProbeError(
      'out_of_memory',
      `${totalBytes} bytes (plus a ${RUNTIME_MARGIN_BYTES}-byte runtime margin) exceed device memory of ${limits.totalMemoryBytes} bytes`,
    );
  }
}

/** Rules 4 and 5 for chains. */
function checkChainsFit(chains: readonly Chain[], limits: Limits): void {
  checkFitsMemory(
    chains.reduce((sum, c) => sum + c.arrayBytes, 0),
    limits,
  );
  for (const chain of chains) {
    if (chain.arrayBytes > MAX_CHAIN_BYTES)
      throw new ProbeError('unsupported', `chains index with 32 bits: at most ${MAX_CHAIN_BYTES} bytes each`);
    if (chain.space === 'texture' && chain.arrayBytes / 4 > MAX_TEXTURE_ELEMENTS) {
      throw new ProbeError('unsupported', `a linear texture holds at most ${MAX_TEXTURE_ELEMENTS} elements`);
    }
  }
}

/** Rule 2 for chase launches: the carveout preference, and the optional L2 flush where the op takes one. */
function launchSettings(source: Fields, takesFlush = true): ChaseLaunchArgs {
  const settings: ChaseLaunchArgs = {};
  if (takesFlush && source.flushL2 !== undefined) settings.flushL2 = boolean(source, 'flushL2');
  if (takesFlush && source.l2FetchGranularityBytes !== undefined) {
    const granularity = source.l2FetchGranularityBytes;
    if (!(L2_FETCH_GRANULARITIES as readonly unknown[]).includes(granularity)) {
      badRequest(`l2FetchGranularityBytes must be one of ${L2_FETCH_GRANULARITIES.join(', ')}, got ${JSON.stringify(granularity)}`);
    }
    settings.l2FetchGranularityBytes = granularity as (typeof L2_FETCH_GRANULARITIES)[number];
  }
  const carveoutPercent = optionalInteger(source, 'carveoutPercent', 0, 100);
  if (carveoutPercent !== undefined) settings.carveoutPercent = carveoutPercent;
  return settings;
}

function chaseCommon(source: Fields) {
  return {
    space: oneOf(source, 'space', MEMORY_SPACES),
    pattern: oneOf(source, 'pattern', ['sequential', 'random'] as const),
    warmup: boolean(source, 'warmup'),
    samples: integer(source, 'samples', 1, MAX_SAMPLES),
    seed: optionalInteger(source, 'seed', 0, MAX_SEED),
  };
}

export function validateHello(raw: unknown): Record<string, never> {
  fields(raw, 'args');
  return {};
}

export function validatePchase(raw: unknown, limits: Limits): PchaseArgs {
  const source = fields(raw, 'args');
  const { space, pattern, warmup, samples, seed } = chaseCommon(source);
  const chain = chainShape(space, source.arrayBytes, source);
  const settings = launchSettings(source);
  const smId = optionalInteger(source, 'smId', 0, limits.multiprocessorCount - 1);
  checkSpaceLimits([chain], chaserSharedBytes(chain, samples), limits);
  checkChainsFit([chain], limits);
  return { ...chain, pattern, warmup, samples, smId, seed, ...settings };
}

/** selftest.consumer takes what pchase takes, and flushL2 like every chase launch. */
export function validateConsumerSelfTest(raw: unknown, limits: Limits): ConsumerSelfTestArgs & ChaseLaunchArgs {
  return validatePchase(raw, limits);
}

export function validatePchaseBatch(raw: unknown, limits: Limits): PchaseBatchArgs {
  const source = fields(raw, 'args');
  const { space, pattern, warmup, samples, seed } = chaseCommon(source);
  const list = source.arrayBytesList;
  if (!Array.isArray(list) || list.length === 0) badRequest('arrayBytesList must be a non-empty array of sizes');
  const chains = list.map((value: unknown, index: number) => chainShape(space, value, source, `arrayBytesList[${index}]`));
  const settings = launchSettings(source);
  if (list.length > limits.multiprocessorCount)
    badRequest(`arrayBytesList must hold at most ${limits.multiprocessorCount} sizes (one chaser per SM)`);
  checkSpaceLimits(chains, Math.max(...chains.map((c) => chaserSharedBytes(c, samples))), limits);
  checkChainsFit(chains, limits);
  return {
    space,
    arrayBytesList: chains.map((c) => c.arrayBytes),
    strideBytes: chains[0]!.strideBytes,
    pattern,
    warmup,
    samples,
    seed,
    ...settings,
  };
}

function chaserShape(raw: unknown, what: string): Chain & { pattern: 'sequential' | 'random'; source: Fields } {
  const source = fields(raw, what);
  const space = oneOf(source, 'space', MEMORY_SPACES);
  const chain = chainShape(space, source.arrayBytes, source);
  return { ...chain, pattern: oneOf(source, 'pattern', ['sequential', 'random'] as const, 'sequential'), source };
}

type PlacedChaser = Required<ChaserSpec>;

function placed(chaser: ReturnType<typeof chaserShape>, defaultWarp: number, limits: Limits): PlacedChaser {
  const warpsPerBlock = Math.floor(limits.maxThreadsPerBlock / limits.warpSize);
  const { source, ...spec } = chaser;
  const warp = optionalInteger(source, 'warp', 0, warpsPerBlock - 1) ?? defaultWarp;
  const lane = optionalInteger(source, 'lane', 0, limits.warpSize - 1) ?? 0;
  return { ...spec, warp, lane };
}

export function validatePchasePair(raw: unknown, limits: Limits): PchasePairArgs & { first: PlacedChaser; second: PlacedChaser } {
  const source = fields(raw, 'args');
  const seed = optionalInteger(source, 'seed', 0, MAX_SEED);
  const firstShape = chaserShape(source.first, 'first');
  const secondShape = chaserShape(source.second, 'second');
  const placement = oneOf(source, 'placement', ['same-sm', 'different-sm'] as const);
  const sameSm = placement === 'same-sm';
  let smIds: [number, number] | undefined;
  if (source['smIds'] !== undefined) {
    const ids = source['smIds'];
    if (!Array.isArray(ids) || ids.length !== 2) badRequest('smIds must be an array of 2 SM ids');
    smIds = [checkInteger(ids[0], 'smIds', 0, MAX_SEED), checkInteger(ids[1], 'smIds', 0, MAX_SEED)];
    if (smIds[0] === smIds[1]) badRequest('smIds must be 2 distinct SM ids');
    if (sameSm) badRequest('placement must be different-sm with smIds');
  }
  const samples = integer(source, 'samples', 1, MAX_SAMPLES);
  const settings = launchSettings(source, false);
  const first = placed(firstShape, 0, limits);
  const second = placed(secondShape, sameSm ? 1 : 0, limits);
  if (sameSm && first.warp === second.warp && first.lane === second.lane)
    badRequest('second must be on another warp or lane than first for same-sm placement');
  if (!sameSm && limits.multiprocessorCount < 2) badRequest('placement different-sm needs at least 2 SMs');
  for (const sm of smIds ?? []) {
    if (sm >= limits.multiprocessorCount) badRequest(`smIds must hold SM ids in [0, ${limits.multiprocessorCount - 1}] (got ${sm})`);
  }
  const needs = [chaserSharedBytes(first, samples), chaserSharedBytes(second, samples)];
  checkSpaceLimits([first, second], sameSm ? needs[0]! + needs[1]! : Math.max(...needs), limits);
  checkChainsFit([first, second], limits);
  return { first, second, placement, samples, seed, ...settings, ...(smIds ? { smIds } : {}) };
}

export function validateBandwidth(raw: unknown, limits: Limits): BandwidthArgs {
  const source = fields(raw, 'args');
  const mode = oneOf(source, 'mode', ['read', 'write'] as const);
  const arrayBytes = multipleOf(integer(source, 'arrayBytes', 16, MAX_ARRAY_BYTES), 'arrayBytes', 16);
  const blocks = integer(source, 'blocks', 1, MAX_BANDWIDTH_BLOCKS);
  const repetitions = integer(source, 'repetitions', 1, MAX_REPETITIONS);
  const passes = optionalInteger(source, 'passes', 1, MAX_BANDWIDTH_PASSES) ?? 1;
  if (arrayBytes * passes > MAX_BANDWIDTH_LAUNCH_BYTES)
    badRequest(`passes must be such that arrayBytes × passes is at most ${MAX_BANDWIDTH_LAUNCH_BYTES} bytes per launch`);
  const cacheHint = oneOf(source, 'cacheHint', BANDWIDTH_CACHE_HINTS, 'default');
  if (cacheHint === 'cg' && mode === 'write') badRequest('cacheHint must be default for mode write (.cg is a load flavour)');
  const threadsPerBlock = integer(source, 'threadsPerBlock', 1, limits.maxThreadsPerBlock);
  checkFitsMemory(arrayBytes + blocks * threadsPerBlock * 4, limits);
  return { mode, arrayBytes, blocks, threadsPerBlock, repetitions, passes, cacheHint };
}

export function validateBandwidthCopy(raw: unknown, limits: Limits): BandwidthCopyArgs {
  const source = fields(raw, 'args');
  const arrayBytes = multipleOf(integer(source, 'arrayBytes', 16, MAX_ARRAY_BYTES), 'arrayBytes', 16);
  const repetitions = integer(source, 'repetitions', 1, MAX_REPETITIONS);
  checkFitsMemory(2 * arrayBytes, limits);
  return { arrayBytes, repetitions };
}

export function validateCalibrate(raw: unknown): CalibrateArgs {
  const samples = optionalInteger(fields(raw, 'args'), 'samples', 1, MAX_CALIBRATE_SAMPLES);
  return samples === undefined ? {} : { samples };
}

/** Rule 5 for clusters: a device without them, then a cluster larger than it co-schedules (the native probe's wording). */
function requireClusters(limits: ClusterLimits, clusterSize: number): void {
  if (limits.computeCapabilityMajor < 9) {
    throw new ProbeError(
      'unsupported',
      `thread block clusters need compute capability 9.0 or newer; this device is sm_${limits.computeCapabilityMajor}${limits.computeCapabilityMinor}`,
    );
  }
  if (clusterSize > limits.maxClusterSize) {
    throw new ProbeError(
      'unsupported',
      `clusters of ${clusterSize} blocks exceed the largest this device co-schedules (${limits.maxClusterSize})`,
    );
  }
}

export function validateComputeSmid(raw: unknown, limits: ClusterLimits): ComputeSmidArgs {
  const source = fields(raw, 'args');
  const clusterSize = integer(source, 'clusterSize', 1, MAX_CLUSTER_SIZE);
  const clusters = integer(source, 'clusters', 1, MAX_SMID_CLUSTERS);
  const repetitions = integer(source, 'repetitions', 1, MAX_SMID_REPETITIONS);
  if (clusters * clusterSize > limits.multiprocessorCount) {
    badRequest(
      `clusters must be at most ${Math.floor(limits.multiprocessorCount / clusterSize)} clusters of ${clusterSize} (one block per SM, ${limits.multiprocessorCount} SMs)`,
    );
  }
  if (clusterSize > 1) requireClusters(limits, clusterSize);
  return { clusterSize, clusters, repetitions };
}

export function validateClusterLimits(raw: unknown, limits: ClusterLimits): ClusterLimitsArgs {
  fields(raw, 'args');
  requireClusters(limits, 1);
  return {};
}

export function validateClusterSync(raw: unknown, limits: ClusterLimits): ClusterSyncArgs {
  const source = fields(raw, 'args');
  const clusterSize = integer(source, 'clusterSize', 1, MAX_CLUSTER_SIZE);
  const samples = integer(source, 'samples', 1, MAX_SAMPLES);
  const threadsPerBlock = integer(source, 'threadsPerBlock', 1, limits.maxThreadsPerBlock);
  requireClusters(limits, clusterSize);
  return { clusterSize, threadsPerBlock, samples };
}

export function validateClusterDsmem(raw: unknown, limits: ClusterLimits): ClusterDsmemArgs {
  const source = fields(raw, 'args');
  const samples = integer(source, 'samples', 1, MAX_SAMPLES);
  const transferBytes = multipleOf(integer(source, 'transferBytes', 8, MAX_TRANSFER_BYTES), 'transferBytes', 8);
  const repetitions = integer(source, 'repetitions', 1, MAX_REPETITIONS);
  const threadsPerBlock = integer(source, 'threadsPerBlock', 1, limits.maxThreadsPerBlock);
  const sharedLimit = sharedLimitBytes(limits);
  if (transferBytes + DSMEM_FIXED_SHARED_BYTES > sharedLimit) {
    badRequest(
      `transferBytes must be at most ${sharedLimit - DSMEM_FIXED_SHARED_BYTES} (the shared memory a block may use, less the ${DSMEM_FIXED_SHARED_BYTES}-byte latency ring)`,
    );
  }
  requireClusters(limits, 2);
  return { samples, transferBytes, threadsPerBlock, repetitions };
}

export function validateClusterLaunch(raw: unknown, limits: ClusterLimits): ClusterLaunchArgs {
  const source = fields(raw, 'args');
  const clusterSize = integer(source, 'clusterSize', 1, MAX_CLUSTER_SIZE);
  const blocks = multipleOf(integer(source, 'blocks', 1, MAX_LAUNCH_BLOCKS), 'blocks', clusterSize);
  const spinNs = integer(source, 'spinNs', 0, MAX_SPIN_NS);
  const repetitions = integer(source, 'repetitions', 1, MAX_LAUNCH_REPETITIONS);
  requireClusters(limits, clusterSize);
  return { clusterSize, blocks, spinNs, repetitions };
}

/** l2.partition, with its defaults filled in. */
export function validateL2Partition(raw: unknown, limits: Limits): Required<L2PartitionArgs> {
  const source = fields(raw, 'args');
  const mode = oneOf(source, 'mode', ['private', 'shared'] as const);
  const arrayBytes = multipleOf(
    optionalInteger(source, 'arrayBytes', 4, MAX_ARRAY_BYTES) ?? DEFAULT_PARTITION_ARRAY_BYTES,
    'arrayBytes',
    4,
  );
  const strideLimit = Math.min(arrayBytes, MAX_PARTITION_STRIDE_BYTES);
  const strideBytes = multipleOf(
    optionalInteger(source, 'strideBytes', 4, strideLimit) ?? DEFAULT_PARTITION_STRIDE_BYTES,
    'strideBytes',
    4,
  );
  const chunks = Math.floor(arrayBytes / strideBytes);
  if (chunks > MAX_SAMPLES)
    badRequest(`arrayBytes must be at most ${MAX_SAMPLES} strides (one latency per chunk is buffered in shared memory)`);
  const sharedLimit = sharedLimitBytes(limits);
  if (chunks * SAMPLE_SHARED_BYTES + SINK_SHARED_BYTES > sharedLimit) {
    badRequest(
      `arrayBytes must be at most ${Math.floor((sharedLimit - SINK_SHARED_BYTES) / SAMPLE_SHARED_BYTES)} strides on this device (its shared memory limit)`,
    );
  }
  checkFitsMemory(mode === 'private' ? arrayBytes * limits.multiprocessorCount : arrayBytes, limits);
  return { mode, arrayBytes, strideBytes };
}

/** l2.farnear, with its defaults filled in. */
export function validateL2Farnear(raw: unknown, limits: Limits): Required<L2FarnearArgs> {
  const source = fields(raw, 'args');
  const ids = source['smIds'];
  if (!Array.isArray(ids) || ids.length < 1 || ids.length > MAX_FARNEAR_SMS)
    badRequest(`smIds must be an array of 1 to ${MAX_FARNEAR_SMS} SM ids`);
  const smIds: number[] = [];
  for (const id of ids) {
    const sm = checkInteger(id, 'smIds', 0, MAX_SEED);
    if (smIds.includes(sm)) badRequest('smIds must be distinct SM ids');
    smIds.push(sm);
  }
  const line = FARNEAR_LINE_BYTES;
  const arrayBytes = multipleOf(integer(source, 'arrayBytes', line, MAX_ARRAY_BYTES), 'arrayBytes', line);
  const strideLimit = Math.min(arrayBytes, MAX_PARTITION_STRIDE_BYTES);
  const strideBytes = multipleOf(
    optionalInteger(source, 'strideBytes', line, strideLimit) ?? DEFAULT_FARNEAR_STRIDE_BYTES,
    'strideBytes',
    line,
  );
  if (Math.floor(arrayBytes / strideBytes) > MAX_SAMPLES)
    badRequest(`arrayBytes must be at most ${MAX_SAMPLES} strides (one latency per chunk is buffered in shared memory)`);
  const passes = optionalInteger(source, 'passes', 2, MAX_FARNEAR_PASSES) ?? DEFAULT_FARNEAR_PASSES;
  const shared = boolean(source, 'shared');
  for (const sm of smIds) {
    if (sm >= limits.multiprocessorCount) badRequest(`smIds must hold SM ids in [0, ${limits.multiprocessorCount - 1}] (got ${sm})`);
  }
  checkFitsMemory(shared ? arrayBytes : arrayBytes * smIds.length, limits);
  return { smIds, arrayBytes, strideBytes, passes, shared };
}

/** l2.persist. */
export function validateL2Persist(raw: unknown, limits: Limits & Pick<DeviceProperties, 'persistingL2CacheMaxBytes'>): L2PersistArgs {
  const source = fields(raw, 'args');
  const line = PERSIST_LINE_BYTES;
  const arrayBytes = multipleOf(integer(source, 'arrayBytes', line, MAX_ARRAY_BYTES), 'arrayBytes', line);
  const windowBytes = multipleOf(integer(source, 'windowBytes', line, Math.min(arrayBytes, 2 ** 32)), 'windowBytes', line);
  const hitRatio = source['hitRatio'];
  if (typeof hitRatio !== 'number' || !(hitRatio > 0) || hitRatio > 1)
    badRequest(`hitRatio must be a number in (0, 1], got ${JSON.stringify(hitRatio)}`);
  const samples = integer(source, 'samples', 1, MAX_SAMPLES);
  const maxPersisting = limits.persistingL2CacheMaxBytes ?? 0;
  if (maxPersisting > 0 && windowBytes > maxPersisting)
    badRequest(`windowBytes must be at most the device's persisting L2 maximum of ${maxPersisting} bytes`);
  checkFitsMemory(arrayBytes, limits);
  if (maxPersisting <= 0) throw new ProbeError('unsupported', 'this device has no persisting L2 (persistingL2CacheMaxBytes is 0)');
  return { arrayBytes, windowBytes, hitRatio, samples };
}
