import { combineConfidences } from '../analysis/index.js';
import type { CalibrateResult, DeviceProperties } from '../gpu/protocol.js';
import type { ElementTopology, RawSeries } from '../model/document.js';
import { toLatencyValue } from './latency-value.js';
import type { ProbeSession } from './probe-session.js';
import { searchSize, type SizeSearchPlan } from './size-search.js';
import { seriesUnder, type Strategy, type StrategyBuild } from './strategy.js';
import { recordedSearch, residentSamples, sweepPoints } from './sweep-series.js';

/**
 * L2 size, segments and latency, and device-memory latency (thesis §4.2;
 * MT4G §IV-F "L2 segment size"): global `.cg` pointer chases (L1 bypassed)
 * from one SM, from well below to above the size the API reports. An SM
 * allocates in its near L2 segment, so where its latency jumps to device
 * memory is one segment's size; the API size divided by it is the number of
 * segments.
 */
const SERIES = 'l2.size';
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

export async function measureL2(session: ProbeSession, device: DeviceProperties, onRound?: (round: string) => void): Promise<void> {
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
  await searchSize(run, l2SearchPlan(device), onRound);
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
    const ratio = apiBytes / measured;
    const segments = Math.round(ratio);
    // A ratio far from an integer means the segment reading or the API size is off.
    const integrality = 1 - 2 * Math.abs(ratio - segments);
    l2.size = { value: apiBytes, unit: 'bytes', source: 'api' };
    l2.segmentSize = sizeValue;
    l2.amount = { value: segments, unit: 'count', source: 'derived', per: 'gpu', confidence: combineConfidences(result.confidence, integrality) };
  } else {
    l2.size = sizeValue;
    if (apiBytes > 0 && measured > apiBytes * 1.25) warnings.push(`l2: measured ${measured} bytes, more than the ${apiBytes} bytes the API reports`);
  }
  const resident = residentSamples(coarse, measured * RESIDENT_SHARE, 4);
  if (resident.length > 0) l2.latency = toLatencyValue(resident, calibration);

  const deviceMemory: ElementTopology = { size: { value: device.totalMemoryBytes, unit: 'bytes', source: 'api' } };
  const largest = coarse.at(-1);
  if (largest && largest.sizeBytes >= 1.5 * result.firstAboveBytes) {
    deviceMemory.latency = toLatencyValue(largest.samples, calibration);
    if (l2.latency) {
      const penalty = Math.round((deviceMemory.latency.mean - l2.latency.mean) * 100) / 100;
      l2.missPenalty = { value: penalty, unit: 'cycles', source: 'derived', confidence: result.confidence };
    }
  } else {
    warnings.push('deviceMemory: the L2 sweep did not reach far enough past the L2 for a device-memory latency');
  }
  return { l2, deviceMemory, warnings };
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
  ownsSeries: seriesUnder(SERIES),
};
