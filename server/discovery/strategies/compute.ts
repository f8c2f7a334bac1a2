import { median } from '../../analysis/index.js';
import { ProbeError } from '../../protocol/probe-error.js';
import type {
  CalibrateResult,
  ClusterDsmemArgs,
  ClusterDsmemResult,
  ClusterLaunchArgs,
  ClusterLaunchResult,
  ClusterLimitsResult,
  ClusterSyncArgs,
  ClusterSyncResult,
  ComputeSmidArgs,
  ComputeSmidResult,
  DeviceProperties,
} from '../../protocol/ops.js';
import type { ComputeTopology, ThreadBlockClusters } from '../../model/compute-schema.js';
import type { MeasuredValue, RawSeries } from '../../model/document.js';
import { gpcLayout, type Placement } from './compute-gpc.js';
import { toLatencyValue } from '../latency-value.js';
import { seriesUnder, type Strategy } from '../strategy.js';

/**
 * The compute side (issue 10): SM limits from the runtime, cores and warp
 * schedulers from a table, and on GPUs with thread block clusters (sm_90+)
 * the GPC map, cluster limits and what clusters cost, measured the
 * thread-block-cluster paper's way. Few, short launches (well under 5 s on
 * an H100). The result is the document's `compute` section, not an element.
 */
const PREFIX = 'compute';
const CENSUS = `${PREFIX}.smid.census`;
const LIMITS = `${PREFIX}.cluster.limits`;
const GPC = `${PREFIX}.gpc`;
const SYNC = `${PREFIX}.cluster.sync`;
const DSMEM = `${PREFIX}.cluster.dsmem`;
const LAUNCH = `${PREFIX}.cluster.launch`;
/** A cluster op the probe refused on a device that should have clusters: its answer, kept so build can say why. */
const REFUSED = `${PREFIX}.cluster.refused`;

/** Rounds of placements (every cluster size each): the GPC map's confidence is their agreement. */
const GPC_ROUNDS = 3;
const SYNC_SAMPLES = 128;
/** Sizes whose barriers are timed (those up to the device's largest), with one thread per block as the paper's Fig. 4a–d; the largest also with 1024 threads. */
const SYNC_SIZES = [1, 2, 4, 8, 16];
const DSMEM_ARGS: ClusterDsmemArgs = { samples: 256, transferBytes: 32 * 1024, threadsPerBlock: 32, repetitions: 16 };
const LAUNCH_SIZES = [2, 4, 8, 16];
/** Blocks of a launch-overhead grid per SM: several waves, so a size that leaves SMs idle needs more of them. */
const LAUNCH_WAVES = 4;
const LAUNCH_SPIN_NS = 20_000;
const LAUNCH_REPETITIONS = 5;

/**
 * FP32 cores and warp schedulers per SM by compute capability (CUDA C++
 * Programming Guide, "Arithmetic Instructions": FP32 results per clock per
 * SM; four SM sub-partitions with one scheduler each since Volta) and per CU
 * on AMD CDNA (four SIMD16 units, one scheduler each).
 */
const CORE_TABLE: Readonly<Record<string, { cores: number; schedulers: number }>> = {
  sm_70: { cores: 64, schedulers: 4 },
  sm_75: { cores: 64, schedulers: 4 },
  sm_80: { cores: 64, schedulers: 4 },
  sm_86: { cores: 128, schedulers: 4 },
  sm_87: { cores: 128, schedulers: 4 },
  sm_89: { cores: 128, schedulers: 4 },
  sm_90: { cores: 128, schedulers: 4 },
  sm_100: { cores: 128, schedulers: 4 },
  sm_120: { cores: 128, schedulers: 4 },
  gfx908: { cores: 64, schedulers: 4 },
  gfx90a: { cores: 64, schedulers: 4 },
  gfx942: { cores: 64, schedulers: 4 },
};

const hasClusters = (device: DeviceProperties) => device.architecture.startsWith('sm_') && device.computeCapabilityMajor >= 9;
/** Answers that drop the cluster part only: a device refusing a cluster feature, or a runtime call failing ('internal', e.g. a cooperative launch refused) must not fail the whole discovery. A kernel fault still does (the probe exits). */
const SKIPPABLE = new Set(['unsupported', 'bad_request', 'out_of_memory', 'internal']);

export const COMPUTE_STRATEGY: Strategy = {
  name: PREFIX,
  elements: [],
  requiredOps: ['compute.smid', 'cluster.limits', 'cluster.sync', 'cluster.dsmem', 'cluster.launch'],
  progressWeight: 0.1,
  // Not yet run on a GPU: a fault in the cluster kernels must not cost the memory discovery before it.
  optional: true,
  async measure(session, device, onRound) {
    const sms = device.multiprocessorCount;
    await session.request(CENSUS, 'compute.smid', { clusterSize: 1, clusters: sms, repetitions: 1 });
    if (!hasClusters(device)) return;
    let current: { name: string; op: string; args: unknown } = { name: LIMITS, op: 'cluster.limits', args: {} };
    try {
      const limits = await session.request(LIMITS, 'cluster.limits', {});
      onRound?.('compute.gpc');
      for (let size = limits.maxClusterSize; size >= 2; size -= 1) {
        const clusters = limits.activeClusters[size - 1] ?? 0;
        if (clusters === 0) continue;
        const args: ComputeSmidArgs = { clusterSize: size, clusters, repetitions: GPC_ROUNDS };
        current = { name: `${GPC}.${size}`, op: 'compute.smid', args };
        await session.request(current.name, 'compute.smid', args);
      }
      onRound?.('compute.cluster.sync');
      const syncSizes = SYNC_SIZES.filter((size) => size <= limits.maxClusterSize);
      const syncRuns = [
        ...syncSizes.map((clusterSize) => ({ clusterSize, threadsPerBlock: 1 })),
        { clusterSize: limits.maxClusterSize, threadsPerBlock: device.maxThreadsPerBlock },
      ];
      for (const run of syncRuns) {
        const args: ClusterSyncArgs = { ...run, samples: SYNC_SAMPLES };
        current = { name: `${SYNC}.${run.clusterSize}.${run.threadsPerBlock}`, op: 'cluster.sync', args };
        await session.request(current.name, 'cluster.sync', args);
      }
      onRound?.('compute.cluster.dsmem');
      current = { name: DSMEM, op: 'cluster.dsmem', args: DSMEM_ARGS };
      await session.request(DSMEM, 'cluster.dsmem', DSMEM_ARGS);
      onRound?.('compute.cluster.launch');
      for (const clusterSize of LAUNCH_SIZES.filter((size) => size <= limits.maxClusterSize)) {
        const blocks = Math.ceil((LAUNCH_WAVES * sms) / clusterSize) * clusterSize;
        const args: ClusterLaunchArgs = { clusterSize, blocks, spinNs: LAUNCH_SPIN_NS, repetitions: LAUNCH_REPETITIONS };
        current = { name: `${LAUNCH}.${clusterSize}`, op: 'cluster.launch', args };
        await session.request(current.name, 'cluster.launch', args);
      }
    } catch (error) {
      if (!(error instanceof ProbeError) || !SKIPPABLE.has(error.code)) throw error;
      // The cluster part is dropped whole (no half-measured cluster section); the census stays, and the refusal is kept for build to report.
      session.discard((series) => series.name !== CENSUS && COMPUTE_STRATEGY.ownsSeries(series.name));
      session.raw.push({ name: REFUSED, op: current.op, args: current.args, result: { code: error.code, message: error.message } });
    }
  },
  build(raw, device, calibration) {
    const warnings: string[] = [];
    const compute = buildCompute(raw, device, calibration, warnings);
    return { elements: {}, warnings, compute };
  },
  ownsSeries: seriesUnder(PREFIX),
};

function buildCompute(
  raw: readonly RawSeries[],
  device: DeviceProperties,
  calibration: CalibrateResult | null,
  warnings: string[],
): ComputeTopology {
  const api = (value: number, unit: MeasuredValue['unit'] = 'count'): MeasuredValue => ({ value, unit, source: 'api' });
  const apiOrNull = (value: number | null | undefined) => (value === null || value === undefined ? null : api(value));
  const table = CORE_TABLE[device.architecture];
  if (!table) warnings.push(`compute: no cores-per-SM entry for ${device.architecture}; coresPerSm and warpSchedulersPerSm are null`);
  const census = one<ComputeSmidResult>(raw, CENSUS);
  const smIds = census ? [...new Set(census.launches.flatMap((l) => l.smIds))].sort((a, b) => a - b) : null;
  const smClock: MeasuredValue | null =
    calibration && calibration.smClockHz > 0
      ? { value: calibration.smClockHz, unit: 'hz', source: 'microbenchmark' }
      : device.clockRateKHz
        ? api(device.clockRateKHz * 1000, 'hz')
        : null;
  const clusters = buildClusters(raw, device, calibration, smClock?.value ?? null, census);
  const rounds = gpcRounds(raw);
  let gpcs: ComputeTopology['gpcs'] = null;
  if (rounds.length > 0 && smIds) {
    gpcs = gpcLayout(
      rounds,
      smIds,
      `clusters of every size from 2 to ${clusters.maxClusterSize?.value ?? '?'} blocks, ${rounds.length} rounds, one block per SM: SMs that shared a cluster share a GPC (the blocks of a cluster always run in one GPC). SMs only ever placed in clusters of two are listed as TPCs of unknown GPC; TPCs are the SM pairs clusters of two always landed on`,
      one<ClusterLimitsResult>(raw, LIMITS)?.activeClusters ?? [],
    );
    const placed = gpcs.smsPerGpc.reduce((sum, n) => sum + n, 0) + gpcs.tpcsOfUnknownGpc.flat().length;
    if (placed !== device.multiprocessorCount)
      warnings.push(
        `compute: the GPC map places ${placed} of ${device.multiprocessorCount} SMs (unplaced: ${gpcs.unplacedSmIds.join(', ')})`,
      );
    if (gpcs.occupancyAgreement !== null && gpcs.occupancyAgreement < 1) {
      warnings.push(
        `compute: the GPC map explains cudaOccupancyMaxActiveClusters for ${(gpcs.occupancyAgreement * 100).toFixed(0)} % of cluster sizes, not all: a GPC may be split or joined`,
      );
    }
  }
  return {
    multiprocessorCount: api(device.multiprocessorCount),
    coresPerSm: table ? { value: table.cores, unit: 'count', source: 'table' } : null,
    warpSchedulersPerSm: table ? { value: table.schedulers, unit: 'count', source: 'table' } : null,
    warpSize: api(device.warpSize),
    registersPerBlock: apiOrNull(device.regsPerBlock),
    registersPerSm: apiOrNull(device.regsPerMultiprocessor),
    maxThreadsPerBlock: api(device.maxThreadsPerBlock),
    maxThreadsPerSm: apiOrNull(device.maxThreadsPerMultiprocessor),
    maxBlocksPerSm: apiOrNull(device.maxBlocksPerMultiprocessor),
    smClock,
    smIds,
    gpcs,
    clusters,
  };
}

function one<T>(raw: readonly RawSeries[], name: string): T | undefined {
  return raw.find((series) => series.name === name)?.result as T | undefined;
}

function under(raw: readonly RawSeries[], prefix: string): RawSeries[] {
  return raw.filter((series) => series.name.startsWith(`${prefix}.`));
}

/** Round r of the GPC map: the r-th launch of every cluster size. */
function gpcRounds(raw: readonly RawSeries[]): Placement[][] {
  const rounds: Placement[][] = [];
  for (const series of under(raw, GPC)) {
    const { clusterSize } = series.args as ComputeSmidArgs;
    for (const [r, launch] of (series.result as ComputeSmidResult).launches.entries()) {
      const round = rounds[r] ?? [];
      round.push({ clusterSize, smIds: launch.smIds });
      rounds[r] = round;
    }
  }
  return rounds;
}

function buildClusters(
  raw: readonly RawSeries[],
  device: DeviceProperties,
  calibration: CalibrateResult | null,
  smClockHz: number | null,
  census: ComputeSmidResult | undefined,
): ThreadBlockClusters {
  const none = (reason: string): ThreadBlockClusters => ({
    supported: false,
    reason,
    maxPortableClusterSize: null,
    maxClusterSize: null,
    bySize: [],
    sync: [],
    launchOverhead: [],
    dsmem: null,
  });
  if (!hasClusters(device)) {
    return none(
      device.architecture.startsWith('sm_')
        ? `thread block clusters need compute capability 9.0 or newer; this device is ${device.architecture}`
        : `thread block clusters are an NVIDIA Hopper feature; this is ${device.architecture}`,
    );
  }
  const refused = one<{ code: string; message: string }>(raw, REFUSED);
  if (refused) return none(`the probe answered ${refused.code}: ${refused.message}`);
  const limits = one<ClusterLimitsResult>(raw, LIMITS);
  if (!limits) return none('not measured');
  const sms = device.multiprocessorCount;
  const idleIn = (launches: ComputeSmidResult['launches']): number | null => {
    const counts = launches.filter((l) => l.coResident).map((l) => sms - new Set(l.smIds).size);
    return counts.length > 0 ? median(counts) : null;
  };
  const bySize = limits.activeClusters.map((activeClusters, i) => {
    const clusterSize = i + 1;
    const series = clusterSize === 1 ? census : one<ComputeSmidResult>(raw, `${GPC}.${clusterSize}`);
    return {
      clusterSize,
      activeClusters,
      idleSms: Math.max(0, sms - activeClusters * clusterSize),
      measuredIdleSms: series ? idleIn(series.launches) : null,
    };
  });
  const sync = under(raw, SYNC).map((series) => {
    const args = series.args as ClusterSyncArgs;
    const r = series.result as ClusterSyncResult;
    const latency = (samples: number[]) => toLatencyValue(samples, calibration);
    return {
      clusterSize: args.clusterSize,
      threadsPerBlock: args.threadsPerBlock,
      arrive: latency(r.arriveCycles),
      wait: latency(r.waitCycles),
      clusterSync: latency(r.clusterSyncCycles),
      syncthreads: latency(r.syncthreadsCycles),
      gridSync: latency(r.gridSyncCycles),
    };
  });
  const launchOverhead = under(raw, LAUNCH).map((series) => {
    const args = series.args as ClusterLaunchArgs;
    const r = series.result as ClusterLaunchResult;
    const clusterSeconds = median(r.clusterSecondsPerRepetition);
    const plainSeconds = median(r.plainSecondsPerRepetition);
    return {
      clusterSize: args.clusterSize,
      blocks: args.blocks,
      clusterSeconds,
      plainSeconds,
      overheadFraction: round4(clusterSeconds / plainSeconds - 1),
    };
  });
  return {
    supported: true,
    reason: null,
    maxPortableClusterSize: { value: limits.maxPortableClusterSize, unit: 'count', source: 'api' },
    maxClusterSize: { value: limits.maxClusterSize, unit: 'count', source: 'api' },
    bySize,
    sync,
    launchOverhead,
    dsmem: buildDsmem(raw, calibration, smClockHz),
  };
}

function buildDsmem(
  raw: readonly RawSeries[],
  calibration: CalibrateResult | null,
  smClockHz: number | null,
): ThreadBlockClusters['dsmem'] {
  const series = raw.find((s) => s.name === DSMEM);
  if (!series) return null;
  const args = series.args as ClusterDsmemArgs;
  const r = series.result as ClusterDsmemResult;
  const bandwidth = (cycles: number[]): MeasuredValue => {
    const perCycle = args.transferBytes / median(cycles);
    return smClockHz
      ? {
          value: Math.round(perCycle * smClockHz),
          unit: 'bytes/s',
          source: 'microbenchmark',
          note: `${args.transferBytes} bytes block to block with its three cluster barriers, at the SM clock`,
        }
      : { value: round4(perCycle), unit: 'count', source: 'microbenchmark', note: 'bytes per SM cycle (the SM clock is not known)' };
  };
  return {
    smIds: r.smIds,
    localLatency: toLatencyValue(r.localLatenciesCycles, calibration),
    remoteLatency: toLatencyValue(r.remoteLatenciesCycles, calibration),
    l2Latency: toLatencyValue(r.l2LatenciesCycles, calibration),
    transferBytes: args.transferBytes,
    pushBandwidth: bandwidth(r.pushCycles),
    pullBandwidth: bandwidth(r.pullCycles),
    globalBandwidth: bandwidth(r.globalCycles),
  };
}

function round4(value: number): number {
  return Math.round(value * 1e4) / 1e4;
}
