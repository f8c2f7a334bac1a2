import { analyseFarnear, analysePersist, analyseSharedCapacity, type FarnearSeries } from '../../analysis/l2-farnear.js';
import { median } from '../../analysis/descriptive.js';
import { ProbeError } from '../../protocol/probe-error.js';
import type {
  CalibrateResult,
  DeviceProperties,
  L2FarnearArgs,
  L2FarnearResult,
  L2PersistArgs,
  L2PersistResult,
} from '../../protocol/ops.js';
import type { L2Partitions, RawSeries } from '../../model/document.js';
import { l2PartitionCapacityBytes } from './l2.js';
import { toLatencyValue } from '../latency-value.js';
import type { ProbeSession } from '../probe-session.js';

/**
 * The L2 partitions' second half (issue 9): with one SM of each measured
 * group (the lowest id of each), l2.farnear walks past one partition's
 * capacity (1.5 × the measured segment size, else half the API L2) and past
 * the whole L2 (4 × the API size): far-partition hits past capacity and near
 * and far device memory. Shared mode at 0.75 × and 1.25 × one partition: does
 * the first SM keep its lines after the other group's SM read them too (data
 * both groups read is held in both partitions)? l2.persist once where the
 * device has a persisting L2. A probe without these ops, or a device that
 * refuses them, leaves the fields out (a warning at build).
 */
const FARNEAR = 'l2-partition.farnear';
export const FARNEAR_BEYOND = `${FARNEAR}.beyond`;
export const FARNEAR_DRAM = `${FARNEAR}.dram`;
export const FARNEAR_SHARED = `${FARNEAR}.shared`;
export const PERSIST = 'l2-partition.persist';
/** Timed chunks per SM and walk (the raw series stay compact: about 15 kB for all four walks); the shared walks only need the first SM's surviving share. */
const CHUNKS = 512;
const SHARED_CHUNKS = 256;
const LINE = 128;
const PERSIST_SAMPLES = 128;
/** Answers that leave the fields out rather than fail the partitions. */
const SKIPPED = new Set(['unknown_op', 'unsupported', 'bad_request', 'out_of_memory']);

function farnearRequest(smIds: number[], bytes: number, shared: boolean): L2FarnearArgs {
  const chunks = shared ? SHARED_CHUNKS : CHUNKS;
  const strideBytes = Math.max(LINE, Math.ceil(bytes / chunks / LINE) * LINE);
  return { smIds, arrayBytes: Math.max(1, Math.round(bytes / strideBytes)) * strideBytes, strideBytes, passes: 2, shared };
}

/** The requests, in order; empty without two SM groups. */
export function farnearPlan(
  groups: readonly number[][],
  segmentBytes: number,
  device: DeviceProperties,
): Array<{ name: string; args: L2FarnearArgs }> {
  if (groups.length < 2 || !(segmentBytes > 0)) return [];
  const smIds = [Math.min(...groups[0]!), Math.min(...groups[1]!)];
  return [
    { name: FARNEAR_BEYOND, args: farnearRequest(smIds, 1.5 * segmentBytes, false) },
    { name: FARNEAR_DRAM, args: farnearRequest(smIds, 4 * device.l2CacheSizeBytes, false) },
    { name: FARNEAR_SHARED, args: farnearRequest(smIds, 0.75 * segmentBytes, true) },
    { name: FARNEAR_SHARED, args: farnearRequest(smIds, 1.25 * segmentBytes, true) },
  ];
}

export function persistRequest(device: DeviceProperties): L2PersistArgs | null {
  const max = device.persistingL2CacheMaxBytes ?? 0;
  if (!(max > 0) || !(device.l2CacheSizeBytes > 0)) return null;
  const windowBytes = Math.floor(Math.min(max, device.l2CacheSizeBytes / 4) / LINE) * LINE;
  return { arrayBytes: Math.ceil((2 * device.l2CacheSizeBytes) / LINE) * LINE, windowBytes, hitRatio: 1, samples: PERSIST_SAMPLES };
}

async function optional(run: () => Promise<unknown>): Promise<boolean> {
  try {
    await run();
    return true;
  } catch (error) {
    if (error instanceof ProbeError && SKIPPED.has(error.code)) return false;
    throw error;
  }
}

export async function measureFarnear(session: ProbeSession, device: DeviceProperties, groups: readonly number[][]): Promise<void> {
  const segmentBytes = l2PartitionCapacityBytes(session.raw) ?? device.l2CacheSizeBytes / 2;
  for (const { name, args } of farnearPlan(groups, segmentBytes, device)) {
    if (!(await optional(() => session.request(name, 'l2.farnear', args)))) break;
  }
  const persist = persistRequest(device);
  if (persist) await optional(() => session.request(PERSIST, 'l2.persist', persist));
}

function farnearRuns(raw: readonly RawSeries[], name: string): L2FarnearResult[] {
  return raw.filter((s) => s.name === name && s.op === 'l2.farnear').map((s) => s.result as L2FarnearResult);
}

/** The partitions' farnear and persist fields from recorded series (pure); absent fields come with a warning. */
export function buildFarnear(
  raw: readonly RawSeries[],
  partitions: L2Partitions,
  calibration: CalibrateResult | null,
): { fields: Partial<L2Partitions>; warnings: string[] } {
  const fields: Partial<L2Partitions> = {};
  const warnings: string[] = [];
  if (partitions.count !== 2 || !partitions.farLatency) return { fields, warnings };
  const overhead = calibration?.clockReadOverheadCycles ?? 0;
  // A timed load that did not wait for its data reads its issue cost (a few cycles), far under any L2 hit: such
  // series (an H100 gave them before the start clock fed the address) say nothing about the classes.
  const floorRaw = 0.8 * (partitions.nearLatency.p50 + overhead);
  const plausible = (series: FarnearSeries[]) => {
    const timed = series.flatMap((s) => s.latenciesCycles).filter((x) => x > 0);
    return timed.length > 0 && median(timed) >= floorRaw;
  };
  const recordedBeyond = farnearRuns(raw, FARNEAR_BEYOND).flatMap((r) => r.sms as FarnearSeries[]);
  const recordedDram = farnearRuns(raw, FARNEAR_DRAM).flatMap((r) => r.sms as FarnearSeries[]);
  const recordedShared = farnearRuns(raw, FARNEAR_SHARED).filter((r) => r.shared && r.sms.length >= 2);
  const refused = [recordedBeyond, recordedDram, ...recordedShared.map((r) => r.sms as FarnearSeries[])].some(
    (series) => series.length > 0 && !plausible(series),
  );
  if (refused) {
    warnings.push(
      `l2: l2.farnear timed loads read under ${Math.round(floorRaw)} cycles, less than an L2 hit: they did not wait for their data, so the far-partition, device-memory and shared-data figures are left out`,
    );
  }
  const beyond = refused ? [] : recordedBeyond;
  const dram = refused ? [] : recordedDram;
  const sharedRuns = refused ? [] : recordedShared;
  const analysis = analyseFarnear(beyond, dram);
  warnings.push(...analysis.warnings.map((w) => `l2: ${w}`));
  if (recordedBeyond.length === 0 && recordedDram.length === 0)
    warnings.push('l2: no far-partition or device-memory classes (l2.farnear did not run)');
  if (analysis.farBeyondSamples) fields.farBeyondCapacityLatency = toLatencyValue(analysis.farBeyondSamples, calibration);
  if (analysis.deviceMemoryNearSamples) fields.deviceMemoryNearLatency = toLatencyValue(analysis.deviceMemoryNearSamples, calibration);
  if (analysis.deviceMemoryFarSamples) fields.deviceMemoryFarLatency = toLatencyValue(analysis.deviceMemoryFarSamples, calibration);
  if (analysis.farBeyondSamples || analysis.deviceMemoryNearSamples) fields.farNearConfidence = Math.round(analysis.confidence * 100) / 100;

  // Raw-cycle thresholds (the series carry the clock-read overhead): a near-partition hit is at most midway to a
  // far-partition hit past capacity; an L2 hit at most midway to near device memory.
  const farRaw = partitions.farLatency.p50 + overhead;
  const beyondRaw = analysis.farBeyondSamples ? median(analysis.farBeyondSamples) : 1.5 * farRaw;
  const memoryRaw = analysis.deviceMemoryNearSamples ? median(analysis.deviceMemoryNearSamples) : 2 * farRaw;
  const shared = sharedRuns;
  if (shared.length > 0) {
    const capacity = analyseSharedCapacity(
      shared.map((r) => ({ arrayBytes: r.arrayBytes, first: r.sms[0]! })),
      (farRaw + beyondRaw) / 2,
    );
    const points = capacity.points.map((p) => `${p.arrayBytes} B: ${Math.round(p.survivedShare * 100)} %`).join(', ');
    if (capacity.capacityBytes !== null) {
      fields.sharedDataCapacityBytes = capacity.capacityBytes;
      fields.sharedDataNote = `data read by an SM of each group (l2.farnear shared mode): the first SM’s lines survive the second’s walk up to ${capacity.survivedBelowBytes} B and not from ${capacity.lostFromBytes} B (share of its chunks still near-partition hits: ${points}); the capacity is midway`;
    } else {
      warnings.push(`l2: the shared-data sizes measured do not bracket the capacity (${points})`);
    }
  } else if (beyond.length > 0) {
    warnings.push('l2: no shared-data capacity (l2.farnear shared mode did not run)');
  }
  // A persisting line is a hit wherever it is homed: up to the far-partition hit past capacity, not device memory.
  const persistThreshold = (beyondRaw + memoryRaw) / 2;
  const persist = raw.filter((s) => s.name === PERSIST && s.op === 'l2.persist').map((s) => s.result as L2PersistResult);
  const last = persist[persist.length - 1];
  if (last && !plausible([{ smId: 0, latenciesCycles: [...last.withoutCycles, ...last.withCycles] }])) {
    warnings.push(
      `l2: l2.persist timed loads read under ${Math.round(floorRaw)} cycles, less than an L2 hit: the persisting window's effect is left out`,
    );
  } else if (last) {
    const rates = analysePersist(last, persistThreshold);
    fields.persistingWindow = {
      windowBytes: last.windowBytes,
      ...rates,
      note: `${last.samples} lines of the window timed after streaming ${last.arrayBytes} B twice, without and with a persisting access-policy window (hitRatio ${last.hitRatio}, set-aside granted ${last.persistingLimitBytes} B)`,
    };
  }
  return { fields, warnings };
}
