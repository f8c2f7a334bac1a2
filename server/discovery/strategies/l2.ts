import { combineConfidences, concatSamples, detectLineSize, lineSizeStrides, slowThreshold } from '../../analysis/index.js';
import { fitL2Capacity, type L2CapacityFit } from '../../analysis/l2-capacity.js';
import type { CalibrateResult, DeviceProperties } from '../../protocol/ops.js';
import type { ElementTopology, RawSeries } from '../../model/document.js';
import { toLatencyValue } from '../latency-value.js';
import type { ProbeSession } from '../probe-session.js';
import { searchSize, type SizeSearchPlan } from '../size-search.js';
import { fetchGranularityOf, lineSizeArrays, sweepLineStrides } from './per-sm-cache.js';
import { seriesUnder, type Strategy, type StrategyBuild } from '../strategy.js';
import { chaseSamples, lineSizePoints } from '../stride-series.js';
import { recordedSearch, residentSamples, sweepPoints } from '../sweep-series.js';

/**
 * L2 size, segments and latency, and device-memory latency (thesis §4.2;
 * MT4G §IV-F "L2 segment size"): global `.cg` pointer chases (L1 bypassed)
 * from one SM, from well below to above the size the API reports. An SM
 * allocates in its near L2 segment, so where its latency jumps to device
 * memory is one segment's size; the API size divided by it is the number of
 * segments.
 */
const SERIES_PREFIX = 'l2';
const SERIES = `${SERIES_PREFIX}.size`;
/** One access per 128 B line: the capacity in lines is what matters, and a real warm-up walk stays short. */
const STRIDE_BYTES = 128;
const SAMPLES = 512;
const MIB = 1024 * 1024;
const RESIDENT_SHARE = 0.9;
/** Below this share of the API size, the measured size is a segment. */
const SEGMENTED_BELOW_SHARE = 0.75;

export function l2SearchPlan(device: DeviceProperties): SizeSearchPlan {
  const apiBytes = device.l2CacheSizeBytes > 0 ? device.l2CacheSizeBytes : 4 * MIB;
  return {
    name: SERIES,
    lowBytes: Math.max(256 * 1024, apiBytes / 16),
    highBytes: apiBytes * 2,
    pointsPerOctave: 4,
    refinePoints: 24,
    refineRounds: 2,
    alignBytes: STRIDE_BYTES,
    minBytes: 64 * 1024,
    maxBytes: Math.min(device.totalMemoryBytes / 4, apiBytes * 8),
    maxWidenings: 2,
  };
}

/** Cold walks: the L2 flushed first, so misses go to device memory. */
const COLD_SAMPLES = 256;
const COLD_STRIDES = [4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256];
/** Device-memory latency: one load per 2 KiB + 128 B (off powers of two, so loads spread over channels and L2 sets), all cold. */
const DRAM_STRIDE_BYTES = 2176;
const DRAM_SAMPLES = 1024;
const LINE_SAMPLES = 1024;
/** Two array sizes past the segment: each walk is tens of MiB, and two sizes that agree settle the line. */
const LINE_SIZES = 2;
const MAX_LINE_STRIDE_BYTES = 512;

export async function measureL2(session: ProbeSession, device: DeviceProperties, onRound?: (round: string) => void): Promise<void> {
  await measureL2Size(session, device, onRound);
  const cold = (name: string, strideBytes: number, samples: number, l2FetchGranularityBytes?: 32) =>
    session.request(name, 'pchase', {
      space: 'global.cg',
      arrayBytes: samples * strideBytes,
      strideBytes,
      pattern: 'sequential',
      warmup: false,
      samples,
      smId: 0,
      flushL2: true,
      ...(l2FetchGranularityBytes ? { l2FetchGranularityBytes } : {}),
    });
  await cold(`${SERIES_PREFIX}.dram`, DRAM_STRIDE_BYTES, DRAM_SAMPLES);
  // The L2's own sector: with the fetch limit at its smallest, a miss fills only what was asked for.
  for (const stride of COLD_STRIDES) await cold(`${SERIES_PREFIX}.fetch`, stride, COLD_SAMPLES, 32);
  // What device memory fills per miss under the limit in force.
  for (const stride of COLD_STRIDES) await cold(`${SERIES_PREFIX}.fill`, stride, COLD_SAMPLES);
  onRound?.(`${SERIES_PREFIX}.fetch`);

  const built = buildL2(session.raw, device, null);
  const segment = built.l2?.segmentSize?.value ?? built.l2?.size?.value;
  const fetch = built.l2?.fetchGranularity?.value;
  if (segment === undefined || fetch === undefined) return;
  const sizes = lineSizeArrays(segment, device.totalMemoryBytes / 4).slice(0, LINE_SIZES);
  const search = recordedSearch(session.raw, SERIES);
  const threshold = search ? slowThreshold(search.coarse) : Infinity;
  await sweepLineStrides(lineSizeStrides(fetch, MAX_LINE_STRIDE_BYTES), threshold, async (strideBytes) => {
    const name = `${SERIES_PREFIX}.line`;
    for (const arrayBytes of sizes) {
      const samples = Math.min(LINE_SAMPLES, Math.floor(arrayBytes / strideBytes));
      await session.request(name, 'pchase', {
        space: 'global.cg',
        arrayBytes,
        strideBytes,
        pattern: 'sequential',
        warmup: true,
        samples,
        smId: 0,
      });
    }
    return chaseSamples(session.raw, name).filter((chase) => chase.strideBytes === strideBytes);
  });
  onRound?.(`${SERIES_PREFIX}.line`);
}

async function measureL2Size(session: ProbeSession, device: DeviceProperties, onRound?: (round: string) => void): Promise<void> {
  const run = async (name: string, sizes: number[]) => {
    for (const arrayBytes of sizes) {
      await session.request(name, 'pchase', {
        space: 'global.cg',
        arrayBytes,
        strideBytes: STRIDE_BYTES,
        pattern: 'sequential',
        warmup: true,
        samples: SAMPLES,
        smId: 0,
      });
    }
    return sweepPoints(session.raw, name);
  };
  await searchSize(run, l2SearchPlan(device), onRound, () => recordedSearch(session.raw, SERIES)?.result ?? null);
}

export interface L2Elements {
  l2?: ElementTopology;
  deviceMemory?: ElementTopology;
  warnings: string[];
}

/** The L2 and device-memory elements from recorded series (pure). */
export function buildL2(raw: readonly RawSeries[], device: DeviceProperties, calibration: CalibrateResult | null): L2Elements {
  const search = recordedSearch(raw, SERIES);
  if (!search) return { warnings: [] };
  const { result, coarse } = search;
  if (!result.found) return { warnings: [`l2: no size change point found (${result.reason})`] };
  const warnings = result.edge ? [`l2: the size change point lies at the ${result.edge} edge of the sweep`] : [];
  const measured = result.lastBelowBytes;
  const sizeValue = { value: measured, unit: 'bytes', source: 'microbenchmark', confidence: result.confidence } as const;
  const l2: ElementTopology = {};
  const apiBytes = device.l2CacheSizeBytes;
  if (apiBytes > 0 && measured < apiBytes * SEGMENTED_BELOW_SHARE) {
    // One partition's capacity: the fit of the miss share over the whole sweep (analysis/l2-capacity.ts), the onset when it finds none.
    const fit = fitL2Capacity(search.points, measured);
    const segment = fit.found ? fit.capacityBytes : measured;
    if (!fit.found) warnings.push(`l2: no partition capacity fit (${fit.reason}); the segment size is the onset of misses`);
    const ratio = apiBytes / segment;
    const segments = Math.round(ratio);
    // A ratio far from an integer means the segment reading or the API size is off.
    const integrality = 1 - 2 * Math.abs(ratio - segments);
    l2.size = { value: apiBytes, unit: 'bytes', source: 'api' };
    l2.segmentSize = fit.found
      ? {
          value: segment,
          unit: 'bytes',
          source: 'microbenchmark',
          confidence: combineConfidences(result.confidence, fit.confidence),
          note: capacityNote(fit, measured),
        }
      : sizeValue;
    // Superseded by the measured partition count where the l2-partition strategy ran (l2-structure.ts).
    l2.amount = {
      value: segments,
      unit: 'count',
      source: 'derived',
      per: 'gpu',
      confidence: combineConfidences(result.confidence, integrality),
      note: 'the API size over the segment size',
    };
  } else {
    l2.size = sizeValue;
    if (apiBytes > 0 && measured > apiBytes * 1.25)
      warnings.push(`l2: measured ${measured} bytes, more than the ${apiBytes} bytes the API reports`);
  }
  const resident = residentSamples(coarse, measured * RESIDENT_SHARE, 4);
  if (resident.length > 0) l2.latency = toLatencyValue(resident, calibration);

  const deviceMemory: ElementTopology = { size: { value: device.totalMemoryBytes, unit: 'bytes', source: 'api' } };
  const dram = concatSamples(chaseSamples(raw, `${SERIES_PREFIX}.dram`).map((chase) => chase.samples));
  const largest = coarse.at(-1);
  if (dram.length > 0) {
    deviceMemory.latency = toLatencyValue(dram, calibration);
  } else if (largest && largest.sizeBytes >= 1.5 * result.firstAboveBytes) {
    // Series recorded before the cold walk existed: the largest array of the sweep, walked warm.
    deviceMemory.latency = toLatencyValue(largest.samples, calibration);
  } else {
    warnings.push('deviceMemory: the L2 sweep did not reach far enough past the L2 for a device-memory latency');
  }

  // Only with the cold device-memory walk: its loads are the misses the granularity walks are told from.
  const hitSamples = residentSamples(coarse, measured * RESIDENT_SHARE, 4);
  if (hitSamples.length > 0 && dram.length > 0) {
    for (const [attribute, name, what] of [
      ['fetchGranularity', 'fetch', 'sector granularity'],
      ['fillGranularity', 'fill', 'fill granularity'],
    ] as const) {
      const fit = fetchGranularityOf(raw, `${SERIES_PREFIX}.${name}`, hitSamples, dram, what);
      if (fit.value) l2[attribute] = { ...fit.value, note: granularityNote(attribute, device) };
      else if (fit.warning) warnings.push(`l2: ${fit.warning}`);
    }
  }
  const linePoints = lineSizePoints(raw, `${SERIES_PREFIX}.line`);
  if (linePoints.length > 0) {
    const line = detectLineSize(linePoints, slowThreshold(coarse));
    if (line.found) l2.lineSize = { value: line.lineBytes, unit: 'bytes', source: 'microbenchmark', confidence: line.confidence };
    else warnings.push(`l2: no line size (${line.reason})`);
  }
  return { l2, deviceMemory, warnings };
}

function capacityNote(fit: Extract<L2CapacityFit, { found: true }>, onsetBytes: number): string {
  const how =
    fit.model === 'set-overflow'
      ? `the mean of the sizes at which the L2's sets overflow: the area above an isotonic fit of the miss share (loads over ${fit.missThresholdCycles} cycles left the near partition) over ${fit.pointCount} sizes of one SM's .cg sweep, ramp ${fit.widthBytes} bytes wide`
      : `a fit of 1 − C/S (random replacement) to the miss share (loads over ${fit.missThresholdCycles} cycles) over ${fit.pointCount} sizes of one SM's .cg sweep`;
  return `one partition's capacity as one SM fills it (its near partition): ${how}, RMS residual ${fit.rmsResidual}; misses start at ${onsetBytes} bytes (the onset)`;
}

/** One partition's capacity fitted from recorded series (pure); null when there is no sweep or no fit. */
export function l2PartitionCapacityBytes(raw: readonly RawSeries[]): number | null {
  const search = recordedSearch(raw, SERIES);
  if (!search || !search.result.found) return null;
  const fit = fitL2Capacity(search.points, search.result.lastBelowBytes);
  return fit.found ? fit.capacityBytes : null;
}

function granularityNote(attribute: 'fetchGranularity' | 'fillGranularity', device: DeviceProperties): string {
  if (attribute === 'fetchGranularity')
    return 'the smallest unit the L2 fills (its sector), measured with cudaLimitMaxL2FetchGranularity at 32 B; the L1 asks the L2 for sectors of this size';
  const limit = device.maxL2FetchGranularityBytes;
  return `what device memory moves into the L2 per miss under the limit in force (cudaLimitMaxL2FetchGranularity ${limit === undefined || limit === null ? 'not reported' : `${limit} B`})`;
}

export const L2_STRATEGY: Strategy = {
  name: 'l2',
  elements: ['l2', 'deviceMemory'],
  requiredOps: ['pchase'],
  // One chaser per request, arrays up to twice the L2 (or past it when widened) walked in full: most of a discovery.
  progressWeight: 4,
  measure: measureL2,
  build(raw, device, calibration) {
    const { l2, deviceMemory, warnings } = buildL2(raw, device, calibration);
    const elements: StrategyBuild['elements'] = {};
    if (l2) elements.l2 = l2;
    if (deviceMemory) elements.deviceMemory = deviceMemory;
    return { elements, warnings };
  },
  ownsSeries: seriesUnder(SERIES_PREFIX),
};
