import { concatSamples, fitFetchGranularity, median } from '../../analysis/index.js';
import type { CalibrateResult, DeviceProperties } from '../../protocol/ops.js';
import type { ElementTopology, RawSeries } from '../../model/document.js';
import { toLatencyValue } from '../latency-value.js';
import { buildPerSmCache, granularityValue, measurePerSmCache, type PerSmCacheSpec } from './per-sm-cache.js';
import { seriesUnder, type Strategy, type StrategyBuild } from '../strategy.js';
import { stridePoints } from '../stride-series.js';

/**
 * The constant caches (MT4G §IV-B, Table I): constant L1 and L1.5, both per
 * SM, reached by ld.const on a __constant__ table. A constant bank holds
 * 64 KiB, so no walk can be larger: the constant L1 (about 2 KiB on recent
 * GPUs) is measured like the L1; the L1.5 still holds all 64 KiB, so its size
 * is reported as a lower bound (MT4G reports it with confidence 0), and its
 * latency and fetch granularity come from the same walks.
 */
const KIB = 1024;
const CONSTANT_BANK_BYTES = 64 * KIB;
const STRIDE_BYTES = 64;

export const CONSTANT_SPEC: PerSmCacheSpec = {
  element: 'constantL1',
  space: 'constant',
  prefix: 'constant',
  plan: {
    name: 'constant.size',
    lowBytes: 512,
    highBytes: CONSTANT_BANK_BYTES,
    pointsPerOctave: 8,
    refinePoints: 24,
    refineRounds: 1,
    alignBytes: STRIDE_BYTES,
    minBytes: 256,
    maxBytes: CONSTANT_BANK_BYTES,
    maxWidenings: 1,
  },
  sizeStrideBytes: STRIDE_BYTES,
  sizeSamples: 1024,
  bytesPerLaunch: (device: DeviceProperties) => Math.min(CONSTANT_BANK_BYTES, device.totalConstMemBytes ?? CONSTANT_BANK_BYTES),
  maxArrayBytes: CONSTANT_BANK_BYTES,
  fetchStrides: [4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024],
  maxLineStrideBytes: 512,
};

/** Sizes at least this multiple of the constant L1's first missing size are served by the L1.5. */
const L15_FROM_SHARE = 2;
/** The L1.5 holds a size when at most this share of its loads are as slow as the level behind it. */
const L15_HOLDS_SHARE = 0.05;

export function buildConstantL15(
  raw: readonly RawSeries[],
  calibration: CalibrateResult | null,
  constantL1FirstAboveBytes: number | undefined,
): { element?: ElementTopology; warnings: string[] } {
  const built = buildPerSmCache(CONSTANT_SPEC, raw, calibration);
  const coarse = built.search?.coarse ?? [];
  const fetch = stridePoints(raw, 'constant.fetch');
  if (constantL1FirstAboveBytes === undefined || coarse.length === 0) return { warnings: [] };
  const l15Points = coarse.filter((point) => point.sizeBytes >= constantL1FirstAboveBytes * L15_FROM_SHARE);
  if (l15Points.length === 0) return { warnings: ['constantL15: the constant sweep did not reach past the constant L1'] };
  const l15Samples = concatSamples(l15Points.map((point) => point.samples));
  const element: ElementTopology = { latency: toLatencyValue(l15Samples, calibration) };
  const warnings: string[] = [];
  // What the level behind the L1.5 costs: every cold load at the largest stride goes there.
  const behind = fetch.at(-1);
  if (!behind) return { element, warnings };
  const l15Cycles = median(l15Samples);
  const threshold = (l15Cycles + median(behind.samples)) / 2;
  const held = l15Points.filter(
    (point) => point.samples.filter((value) => value > threshold).length / point.samples.length <= L15_HOLDS_SHARE,
  );
  const largestHeld = held.at(-1);
  if (largestHeld && largestHeld === l15Points.at(-1)) {
    element.size = {
      value: largestHeld.sizeBytes,
      unit: 'bytes',
      source: 'microbenchmark',
      bound: 'lower',
      confidence: round3(1 - slowShare(largestHeld.samples, threshold)),
      note: 'the largest constant array a kernel can address still hits: the constant L1.5 holds at least this much',
    };
  } else {
    warnings.push('constantL15: loads reached the level behind the constant L1.5 within the constant bank; no size reported');
  }
  const granularity = granularityValue(fitFetchGranularity(fetch, threshold), 'fetch granularity');
  if (granularity.value) element.fetchGranularity = granularity.value;
  else if (granularity.warning) warnings.push(`constantL15: ${granularity.warning}`);
  return { element, warnings };
}

function slowShare(samples: readonly number[], threshold: number): number {
  return samples.filter((value) => value > threshold).length / Math.max(1, samples.length);
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

export const CONSTANT_STRATEGY: Strategy = {
  name: 'constant',
  elements: ['constantL1', 'constantL15'],
  requiredOps: ['pchase.batch'],
  // Small arrays (the bank holds 64 KiB), a few dozen short launches.
  progressWeight: 1,
  measure: (session, device, onRound) => measurePerSmCache(CONSTANT_SPEC, session, device, onRound),
  build(raw, device, calibration) {
    const l1 = buildPerSmCache(CONSTANT_SPEC, raw, calibration, device);
    const l15 = buildConstantL15(raw, calibration, l1.found?.firstAboveBytes);
    const elements: StrategyBuild['elements'] = {};
    if (l1.element) elements.constantL1 = l1.element;
    if (l15.element) elements.constantL15 = l15.element;
    return { elements, warnings: [...l1.warnings, ...l15.warnings] };
  },
  ownsSeries: seriesUnder('constant'),
};
