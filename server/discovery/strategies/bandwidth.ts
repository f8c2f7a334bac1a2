import {
  bestBandwidthPoint,
  bytesPerSecond,
  DEFAULT_MIN_GAIN,
  describeGeometry,
  median,
  searchBandwidth,
  type BandwidthPoint,
  type BandwidthSearchPlan,
} from '../../analysis/index.js';
import type { BandwidthArgs, BandwidthCopyArgs, BandwidthResult, DeviceProperties } from '../../protocol/ops.js';
import type { ElementTopology, MeasuredValue, RawSeries } from '../../model/document.js';
import { bandwidthConfidence, type BandwidthConfidence } from './bandwidth-confidence.js';
import type { ProbeSession } from '../probe-session.js';
import { seriesUnder, type Strategy, type StrategyBuild } from '../strategy.js';

/**
 * L2 and device-memory read and write bandwidth (issue 9, Discovery II):
 * 128-bit streaming launches whose geometry — passes over the array inside
 * one launch, threads per SM, SMs used — is searched until the best rate
 * stops improving (server/analysis/bandwidth.ts), instead of MT4G's one fixed
 * launch, which one pass over an L2-sized array leaves bound by the launch.
 * The L2 is read with .cg loads (L2 only) from an array of about half its
 * API size; device memory from an array of 8× the L2, held to a
 * device-to-device copy of the same array (bytes read plus written). Every
 * geometry's launch times stay in the raw series: the curve.
 */
const PREFIX = 'bandwidth';
const COPY_SERIES = `${PREFIX}.copy`;
const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
/** Launches per geometry after the probe's untimed warm-up: few, the search measures many geometries. */
const REPETITIONS = 3;
/** The L2 array: this share of the API size, inside one segment of a two-segment L2 so every SM's reads hit. */
const L2_ARRAY_SHARE = 0.45;
/** The device-memory array: this many L2 sizes (1 GiB without an L2 size), at most a quarter of the device's memory for the copy's two arrays. */
const DEVICE_ARRAY_L2_MULTIPLE = 8;
const DEVICE_ARRAY_MEMORY_SHARE = 1 / 8;
const ARRAY_ALIGN_BYTES = 64 * 1024;
/** One launch streams at most this much (a few ms at device-memory rates): bounds the passes axis and the search's GPU time. */
const MAX_BYTES_PER_LAUNCH = 4 * GIB;
/** The protocol's limit on passes (server/protocol/validate.ts). */
const MAX_PASSES = 4096;
const MAX_ROUNDS = 2;

interface Target {
  series: string;
  element: 'l2' | 'deviceMemory';
  attribute: 'readBandwidth' | 'writeBandwidth';
  mode: BandwidthArgs['mode'];
  cacheHint?: BandwidthArgs['cacheHint'];
}

const TARGETS: readonly Target[] = [
  { series: `${PREFIX}.l2.read`, element: 'l2', attribute: 'readBandwidth', mode: 'read', cacheHint: 'cg' },
  { series: `${PREFIX}.l2.write`, element: 'l2', attribute: 'writeBandwidth', mode: 'write' },
  { series: `${PREFIX}.dram.read`, element: 'deviceMemory', attribute: 'readBandwidth', mode: 'read' },
  { series: `${PREFIX}.dram.write`, element: 'deviceMemory', attribute: 'writeBandwidth', mode: 'write' },
];

const alignDown = (bytes: number) => Math.max(ARRAY_ALIGN_BYTES, Math.floor(bytes / ARRAY_ALIGN_BYTES) * ARRAY_ALIGN_BYTES);

/** The arrays streamed: the L2's (null without an API L2 size) and device memory's. */
export function bandwidthArrays(device: DeviceProperties): { l2Bytes: number | null; deviceBytes: number } {
  const l2 = device.l2CacheSizeBytes;
  const wanted = l2 > 0 ? DEVICE_ARRAY_L2_MULTIPLE * l2 : GIB;
  return {
    l2Bytes: l2 > 0 ? alignDown(l2 * L2_ARRAY_SHARE) : null,
    deviceBytes: alignDown(Math.min(wanted, device.totalMemoryBytes * DEVICE_ARRAY_MEMORY_SHARE)),
  };
}

export function bandwidthSearchPlan(device: DeviceProperties, arrayBytes: number): BandwidthSearchPlan {
  return {
    multiprocessorCount: device.multiprocessorCount,
    maxThreadsPerBlock: device.maxThreadsPerBlock,
    maxThreadsPerMultiprocessor: device.maxThreadsPerMultiprocessor ?? device.maxThreadsPerBlock,
    warpSize: device.warpSize,
    arrayBytes,
    maxBytesPerLaunch: MAX_BYTES_PER_LAUNCH,
    maxPasses: MAX_PASSES,
    minGain: DEFAULT_MIN_GAIN,
    maxRounds: MAX_ROUNDS,
  };
}

function arrayOf(target: Target, device: DeviceProperties): number | null {
  const arrays = bandwidthArrays(device);
  return target.element === 'l2' ? arrays.l2Bytes : arrays.deviceBytes;
}

async function measureBandwidth(session: ProbeSession, device: DeviceProperties, onRound?: (round: string) => void): Promise<void> {
  for (const target of TARGETS) {
    const arrayBytes = arrayOf(target, device);
    if (arrayBytes === null) continue;
    await searchBandwidth(bandwidthSearchPlan(device, arrayBytes), async (geometry) => {
      const args: BandwidthArgs = {
        mode: target.mode,
        arrayBytes,
        ...geometry,
        repetitions: REPETITIONS,
        ...(target.cacheHint ? { cacheHint: target.cacheHint } : {}),
      };
      const result = await session.request(target.series, 'bandwidth', args);
      return bytesPerSecond(result.bytesPerRepetition, result.secondsPerRepetition);
    });
    onRound?.(target.series);
  }
  await session.request(COPY_SERIES, 'bandwidth.copy', { arrayBytes: bandwidthArrays(device).deviceBytes, repetitions: REPETITIONS });
}

/** A recorded launch geometry with its rate and launch times. */
export interface RecordedBandwidthPoint extends BandwidthPoint {
  arrayBytes: number;
  secondsPerRepetition: readonly number[];
  cacheHint: NonNullable<BandwidthArgs['cacheHint']>;
}

/** Every geometry recorded under `name` (the curve), in the order measured. */
export function bandwidthPoints(raw: readonly RawSeries[], name: string): RecordedBandwidthPoint[] {
  return raw
    .filter((series) => series.name === name && series.op === 'bandwidth')
    .map((series) => {
      const args = series.args as BandwidthArgs;
      const result = series.result as BandwidthResult;
      return {
        blocks: args.blocks,
        threadsPerBlock: args.threadsPerBlock,
        passes: args.passes ?? 1,
        arrayBytes: args.arrayBytes,
        cacheHint: args.cacheHint ?? 'default',
        secondsPerRepetition: result.secondsPerRepetition,
        bytesPerSecond: bytesPerSecond(result.bytesPerRepetition, result.secondsPerRepetition),
      };
    });
}

/** The copy reference: bytes read plus written per second, or null when none was recorded. */
export function copyReferenceBytesPerSecond(raw: readonly RawSeries[]): number | null {
  const rates = raw
    .filter((series) => series.name === COPY_SERIES && series.op === 'bandwidth.copy')
    .map((series) => {
      const result = series.result as BandwidthResult;
      return bytesPerSecond(2 * result.bytesPerRepetition, result.secondsPerRepetition);
    });
  return rates.length > 0 ? median(rates) : null;
}

const terabytes = (bytesPerSecond: number) => `${(bytesPerSecond / 1e12).toFixed(2)} TB/s`;
const mebibytes = (bytes: number) => `${Math.round((bytes / MIB) * 10) / 10} MiB`;

const percent = (share: number) => `${(share * 100).toFixed(1)} %`;

function noteOf(
  target: Target,
  best: RecordedBandwidthPoint,
  points: number,
  device: DeviceProperties,
  copy: number | null,
  sureness: BandwidthConfidence,
): string {
  const loads =
    target.mode === 'write'
      ? 'full 16 B stores (whole sectors, no read-for-fill)'
      : best.cacheHint === 'cg'
        ? '16 B .cg loads (L2 only)'
        : '16 B loads';
  const array =
    target.element === 'l2' && device.l2CacheSizeBytes > 0
      ? `${mebibytes(best.arrayBytes)} array (${Math.round((best.arrayBytes / device.l2CacheSizeBytes) * 100)} % of the API L2)`
      : `${mebibytes(best.arrayBytes)} array`;
  const parts = [
    `best of ${points} launch geometries: ${describeGeometry(best, device.multiprocessorCount)}, ${loads} over a ${array}; every geometry's times are in raw series ${target.series}`,
    `launch overhead ${percent(sureness.overheadShare)} of its launch time, ${percent(sureness.leadOverNext)} ahead of the next geometries`,
  ];
  if (target.element === 'deviceMemory' && copy !== null) {
    parts.push(
      `device-to-device copy reference ${terabytes(copy)} (bytes read + written); this rate is ${(best.bytesPerSecond / copy).toFixed(2)}× the copy's`,
    );
  }
  return parts.join('; ');
}

/** The bandwidth attributes of the L2 and device-memory elements from recorded series (pure). */
export function buildBandwidth(raw: readonly RawSeries[], device: DeviceProperties): StrategyBuild {
  const elements: Partial<Record<Target['element'], ElementTopology>> = {};
  const warnings: string[] = [];
  const copy = copyReferenceBytesPerSecond(raw);
  for (const target of TARGETS) {
    const points = bandwidthPoints(raw, target.series);
    const best = bestBandwidthPoint(points);
    if (!best) continue;
    const sureness = bandwidthConfidence(points, best);
    const value: MeasuredValue = {
      value: Math.round(best.bytesPerSecond),
      unit: 'bytes/s',
      source: 'microbenchmark',
      confidence: Math.round(sureness.confidence * 1000) / 1000,
      note: noteOf(target, best, points.length, device, copy, sureness),
    };
    elements[target.element] = { ...elements[target.element], [target.attribute]: value };
  }
  if (elements.deviceMemory && copy === null)
    warnings.push('bandwidth: no device-to-device copy recorded: device-memory bandwidth without its reference');
  return { elements, warnings };
}

export const BANDWIDTH_STRATEGY: Strategy = {
  name: PREFIX,
  elements: ['l2', 'deviceMemory'],
  requiredOps: ['bandwidth', 'bandwidth.copy'],
  // A few dozen launches of a few ms at most.
  progressWeight: 0.3,
  measure: measureBandwidth,
  build: (raw, device) => buildBandwidth(raw, device),
  ownsSeries: seriesUnder(PREFIX),
};
