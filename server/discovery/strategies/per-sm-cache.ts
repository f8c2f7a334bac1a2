import {
  concatSamples,
  detectLineSize,
  fitFetchGranularity,
  lineSizeStrides,
  median,
  slowThreshold,
  type ChangePointFound,
  type SweepPoint,
} from '../../analysis/index.js';
import type { CalibrateResult, DeviceProperties, MemorySpace } from '../../protocol/ops.js';
import type { Carveout, ElementName, ElementTopology, MeasuredValue, RawSeries } from '../../model/document.js';
import { toLatencyValue } from '../latency-value.js';
import type { ProbeSession } from '../probe-session.js';
import { searchSize, type SizeSearchPlan } from '../size-search.js';
import { chunkSizes } from '../sizes.js';
import { chaseSamples, lineSizePoints, stridePoints, type ChaseSamples } from '../stride-series.js';
import { seriesUnder, type Strategy, type StrategyBuild } from '../strategy.js';
import { recordedSearch, residentSamples, sweepPoints, type RecordedSearch } from '../sweep-series.js';

/**
 * A per-SM cache reached by one load flavour (thesis §4.1; MT4G §IV-B to
 * §IV-E): its size from a size search run as one chaser per SM in batched
 * launches, its latency from sizes it holds, its fetch granularity from cold
 * walks at growing strides, its line size from strides over arrays just
 * larger than it. The L1, texture and read-only paths and the constant L1
 * differ only in the load flavour and the ranges (one spec each).
 */
export interface PerSmCacheSpec {
  element: ElementName;
  space: MemorySpace;
  /** Series are "<prefix>.size.<round>", "<prefix>.fetch" and "<prefix>.line". */
  prefix: string;
  plan: SizeSearchPlan;
  /** One load per this many bytes in the size sweep (a line, so capacity in lines is what shows). */
  sizeStrideBytes: number;
  sizeSamples: number;
  /** All chasers of one launch together stay below this (they share the L2; the constant bank holds 64 KiB). */
  bytesPerLaunch(device: DeviceProperties): number;
  /** Largest array one chaser may walk (the constant bank). */
  maxArrayBytes: number;
  fetchStrides: readonly number[];
  maxLineStrideBytes: number;
}

/** Timed loads of one cold walk: enough for shares of 1/16 at the finest stride. */
const FETCH_SAMPLES = 256;
/** Chasers per cold-walk launch: repeats on other SMs, pooled. */
const FETCH_COPIES = 4;
/** Array sizes just above the capacity for the line-size walks: C × (1 + k/16). */
const LINE_SIZE_STEPS = [1, 2, 3, 4];
const MAX_LINE_SAMPLES = 2048;
const MIN_LINE_SAMPLES = 256;
/** Sizes at most this share of the measured size count as resident for the latency. */
const RESIDENT_SHARE = 0.9;

export async function measurePerSmCache(
  spec: PerSmCacheSpec,
  session: ProbeSession,
  device: DeviceProperties,
  onRound?: (round: string) => void,
): Promise<void> {
  const maxCount = Math.max(1, device.multiprocessorCount);
  const bytesPerLaunch = spec.bytesPerLaunch(device);
  const launch = async (name: string, arrayBytesList: number[], strideBytes: number, warmup: boolean, samples: number) =>
    session.request(name, 'pchase.batch', {
      space: spec.space,
      arrayBytesList,
      strideBytes,
      pattern: 'sequential',
      warmup,
      samples,
    });
  // Each size twice: the reversed list allocates every array elsewhere, and sweepPoints keeps the placement with fewer misses.
  const run = async (name: string, sizes: number[]) => {
    for (const order of [sizes, [...sizes].reverse()]) {
      for (const list of chunkSizes(order, maxCount, bytesPerLaunch))
        await launch(name, list, spec.sizeStrideBytes, true, spec.sizeSamples);
    }
    return sweepPoints(session.raw, name);
  };
  await searchSize(run, spec.plan, onRound, () => recordedSearch(session.raw, spec.plan.name)?.result ?? null);

  for (const strideBytes of spec.fetchStrides) {
    const samples = Math.max(1, Math.min(FETCH_SAMPLES, Math.floor(spec.maxArrayBytes / strideBytes)));
    const arrayBytes = samples * strideBytes;
    const copies = Math.max(1, Math.min(FETCH_COPIES, maxCount, Math.floor(bytesPerLaunch / arrayBytes)));
    await launch(
      `${spec.prefix}.fetch`,
      Array.from({ length: copies }, () => arrayBytes),
      strideBytes,
      false,
      samples,
    );
  }
  onRound?.(`${spec.prefix}.fetch`);

  const built = buildPerSmCache(spec, session.raw, null);
  const size = built.sizeBytes;
  const fetch = built.element?.fetchGranularity?.value;
  if (size === undefined || fetch === undefined) return;
  const sizes = lineSizeArrays(size, spec.maxArrayBytes);
  const threshold = built.search ? slowThreshold(built.search.coarse) : Infinity;
  await sweepLineStrides(lineSizeStrides(fetch, spec.maxLineStrideBytes), threshold, async (strideBytes) => {
    // At least a few hundred loads: a walk wraps around its chain, and a thrashing one keeps missing on every lap.
    const samples = Math.min(MAX_LINE_SAMPLES, Math.max(MIN_LINE_SAMPLES, Math.floor(Math.min(...sizes) / strideBytes)));
    for (const list of chunkSizes(sizes, maxCount, bytesPerLaunch)) await launch(`${spec.prefix}.line`, list, strideBytes, true, samples);
    return chaseSamples(session.raw, `${spec.prefix}.line`).filter((chase) => chase.strideBytes === strideBytes);
  });
  onRound?.(`${spec.prefix}.line`);
}

/**
 * Walks the line-size strides in ascending order and stops once two strides
 * in a row fit the cache at every size: the answer lies below them, and the
 * larger strides would only repeat it (for an L2 segment each is a walk of
 * tens of MiB).
 */
export async function sweepLineStrides(
  strides: readonly number[],
  thresholdCycles: number,
  measure: (strideBytes: number) => Promise<ChaseSamples[]>,
): Promise<void> {
  let fittingInARow = 0;
  for (const [i, strideBytes] of strides.entries()) {
    const chases = await measure(strideBytes);
    const fits =
      chases.length > 0 &&
      chases.every((chase) => chase.samples.filter((value) => value > thresholdCycles).length <= chase.samples.length * 0.1);
    fittingInARow = fits && i > 0 ? fittingInARow + 1 : 0;
    if (fittingInARow >= 2) return;
  }
}

export function lineSizeArrays(sizeBytes: number, maxArrayBytes: number): number[] {
  return LINE_SIZE_STEPS.map((k) => Math.min(maxArrayBytes, Math.floor((sizeBytes * (1 + k / 16)) / 4) * 4)).filter(
    (size, i, all) => all.indexOf(size) === i,
  );
}

export interface PerSmCacheBuild {
  element?: ElementTopology;
  sizeBytes?: number;
  search?: RecordedSearch;
  found?: ChangePointFound;
  carveout?: Carveout;
  warnings: string[];
}

/** The element from recorded series (pure: discovery and re-analysis alike). */
export function buildPerSmCache(
  spec: PerSmCacheSpec,
  raw: readonly RawSeries[],
  calibration: CalibrateResult | null,
  device?: DeviceProperties,
): PerSmCacheBuild {
  const name = spec.element;
  const search = recordedSearch(raw, spec.plan.name);
  if (!search) return { warnings: [] };
  const { result, coarse } = search;
  if (!result.found) return { search, warnings: [`${name}: no size change point found (${result.reason})`] };
  const warnings = result.edge ? [`${name}: the size change point lies at the ${result.edge} edge of the sweep`] : [];
  const element: ElementTopology = {
    size: { value: result.lastBelowBytes, unit: 'bytes', source: 'microbenchmark', confidence: result.confidence },
  };
  const resident = residentSamples(coarse, result.lastBelowBytes * RESIDENT_SHARE, 8);
  if (resident.length > 0) element.latency = toLatencyValue(resident, calibration);

  const fetch = fetchGranularityOf(raw, `${spec.prefix}.fetch`, resident, nextLevelSamples(coarse, result.firstAboveBytes));
  if (fetch.value) element.fetchGranularity = fetch.value;
  else if (fetch.warning) warnings.push(`${name}: ${fetch.warning}`);

  const linePoints = lineSizePoints(raw, `${spec.prefix}.line`);
  if (linePoints.length > 0) {
    const line = detectLineSize(linePoints, slowThreshold(coarse));
    if (line.found) element.lineSize = { value: line.lineBytes, unit: 'bytes', source: 'microbenchmark', confidence: line.confidence };
    else warnings.push(`${name}: no line size (${line.reason})`);
  }
  const out: PerSmCacheBuild = { element, sizeBytes: result.lastBelowBytes, search, found: result, warnings };
  const carveout = carveoutOf(raw, spec.plan.name, device);
  if (carveout) out.carveout = carveout;
  return out;
}

/** Sizes from this multiple of the first missing size on miss on every line: they show the next level's latency. */
const NEXT_LEVEL_FROM_SHARE = 1.5;

/** Samples of the first few sweep sizes well past the capacity: what a miss here costs (the next level's hit). */
export function nextLevelSamples(points: readonly SweepPoint[], firstAboveBytes: number): number[] {
  return concatSamples(
    points
      .filter((point) => point.sizeBytes >= firstAboveBytes * NEXT_LEVEL_FROM_SHARE)
      .slice(0, 3)
      .map((point) => point.samples),
  );
}

/**
 * The fetch granularity from the cold walks: a load counts as a hit when it
 * is nearer this level's hit latency than the next level's (from the size
 * sweep past the capacity; without one, the latency every load shows at the
 * largest stride, where all miss).
 */
export function fetchGranularityOf(
  raw: readonly RawSeries[],
  name: string,
  hitSamples: readonly number[],
  missSamples: readonly number[] = [],
  what = 'fetch granularity',
): { value?: MeasuredValue; warning?: string } {
  const points = stridePoints(raw, name);
  if (points.length === 0) return {};
  if (hitSamples.length === 0) return { warning: 'no resident latency to tell fetch-granularity hits from misses' };
  const missCycles = median(missSamples.length > 0 ? missSamples : points.at(-1)!.samples);
  const threshold = (median(hitSamples) + missCycles) / 2;
  return granularityValue(fitFetchGranularity(points, threshold), what);
}

export function granularityValue(fit: ReturnType<typeof fitFetchGranularity>, what: string): { value?: MeasuredValue; warning?: string } {
  if (!fit.found) return { warning: `no ${what} (${fit.reason})` };
  return { value: { value: fit.granularityBytes, unit: 'bytes', source: 'microbenchmark', confidence: fit.confidence } };
}

/** The carveout the size sweep ran under, when its series recorded it. */
function carveoutOf(raw: readonly RawSeries[], prefix: string, device: DeviceProperties | undefined): Carveout | undefined {
  const launches = raw
    .filter((series) => series.name.startsWith(`${prefix}.`))
    .flatMap((series) => chaseSamples([series], series.name).slice(0, 1));
  const recorded = launches.map((chase) => chase.launch).filter((launch) => launch !== undefined);
  const first = recorded[0];
  if (!first) return undefined;
  const blockSharedBytes = Math.max(...recorded.map((launch) => launch.sharedBytesPerBlock));
  return {
    preferredSharedPercent: first.carveoutPercent,
    blockSharedBytes,
    reservedSharedBytesPerBlock: device?.reservedSharedMemPerBlockBytes ?? null,
    note: 'the driver gives a block the smallest carveout step that holds its shared memory plus the per-block reserve; the L1 holds what the step leaves of the unified L1/shared memory',
  };
}

/** A registry strategy for one per-SM cache (the carveout it ran under goes into the document with the first such element). */
export function perSmCacheStrategy(spec: PerSmCacheSpec, progressWeight: number): Strategy {
  return {
    name: spec.prefix,
    elements: [spec.element],
    requiredOps: ['pchase.batch'],
    progressWeight,
    measure: (session, device, onRound) => measurePerSmCache(spec, session, device, onRound),
    build(raw, device, calibration) {
      const built = buildPerSmCache(spec, raw, calibration, device);
      const out: StrategyBuild = { elements: built.element ? { [spec.element]: built.element } : {}, warnings: built.warnings };
      if (built.carveout) out.carveout = built.carveout;
      return out;
    },
    ownsSeries: seriesUnder(spec.prefix),
  };
}
