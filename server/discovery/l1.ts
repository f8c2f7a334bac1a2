import { median } from '../analysis/index.js';
import type { CalibrateResult, DeviceProperties } from '../gpu/protocol.js';
import type { ElementTopology, RawSeries } from '../model/document.js';
import { toLatencyValue } from './latency-value.js';
import type { ProbeSession } from './probe-session.js';
import { searchSize, type SizeSearchPlan } from './size-search.js';
import { chunkSizes } from './sizes.js';
import { seriesUnder, type Strategy } from './strategy.js';
import { recordedSearch, residentSamples, sweepPoints } from './sweep-series.js';

/**
 * L1 data cache size and latency (thesis §4.1): global `.ca` pointer chases,
 * one array size per SM in one `pchase.batch` launch, so a sweep of dozens of
 * sizes costs one kernel. One load per 128 B line, and enough timed loads to
 * cover the whole array near the L1 size: real L1s hash lines to sets, so
 * which lines a slightly too large array loses depends on its size, and
 * timing only the array's head would see them by luck (seen on an H100).
 */
const SERIES = 'l1.size';
const STRIDE_BYTES = 128;
const SAMPLES = 2048;
const KIB = 1024;
/** Sizes at most this share of the measured size count as L1-resident for the latency. */
const RESIDENT_SHARE = 0.9;
/** Sizes at least this multiple of the first missing size miss on every thrashed line. */
const MISSING_SHARE = 1.1;

export const L1_SEARCH_PLAN: SizeSearchPlan = {
  name: SERIES,
  lowBytes: 8 * KIB,
  highBytes: 1024 * KIB,
  pointsPerOctave: 8,
  refinePoints: 32,
  refineRounds: 1,
  alignBytes: STRIDE_BYTES,
  minBytes: 1 * KIB,
  maxBytes: 16 * 1024 * KIB,
  maxWidenings: 2,
};

/**
 * The chasers of one launch share the L2: their arrays together must stay
 * well inside it, or misses in L1 would reach device memory and a second
 * step would blur the first.
 */
const L2_SHARE_PER_LAUNCH = 0.25;

export async function measureL1(session: ProbeSession, device: DeviceProperties, onRound?: (round: string) => void): Promise<void> {
  const bytesPerLaunch = Math.max(L1_SEARCH_PLAN.highBytes, device.l2CacheSizeBytes * L2_SHARE_PER_LAUNCH);
  // Each size twice: the reversed list allocates every array elsewhere, and sweepPoints keeps the placement with fewer misses.
  const run = async (name: string, sizes: number[]) => {
    for (const order of [sizes, [...sizes].reverse()]) {
      for (const arrayBytesList of chunkSizes(order, Math.max(1, device.multiprocessorCount), bytesPerLaunch)) {
        await session.request(name, 'pchase.batch', {
          space: 'global.ca',
          arrayBytesList,
          strideBytes: STRIDE_BYTES,
          pattern: 'sequential',
          warmup: true,
          samples: SAMPLES,
        });
      }
    }
    return sweepPoints(session.raw, name);
  };
  await searchSize(run, L1_SEARCH_PLAN, onRound);
}

/** The L1 element from recorded series (pure: also used to re-analyse stored raw data). */
export function buildL1(raw: readonly RawSeries[], calibration: CalibrateResult | null): { element?: ElementTopology; warnings: string[] } {
  const search = recordedSearch(raw, SERIES);
  if (!search) return { warnings: [] };
  const { result, coarse } = search;
  if (!result.found) return { warnings: [`l1: no size change point found (${result.reason})`] };
  const resident = residentSamples(coarse, result.lastBelowBytes * RESIDENT_SHARE, 8);
  const missed = coarse.filter((point) => point.sizeBytes >= result.firstAboveBytes * MISSING_SHARE).slice(0, 4);
  const element: ElementTopology = {
    size: { value: result.lastBelowBytes, unit: 'bytes', source: 'microbenchmark', confidence: result.confidence },
  };
  if (resident.length > 0 && missed.length > 0) {
    const penalty = median(missed.flatMap((point) => [...point.samples])) - median(resident);
    element.missPenalty = { value: penalty, unit: 'cycles', source: 'microbenchmark', confidence: result.confidence };
  }
  if (resident.length > 0) element.latency = toLatencyValue(resident, calibration);
  const warnings = result.edge ? [`l1: the size change point lies at the ${result.edge} edge of the sweep`] : [];
  return { element, warnings };
}

export const L1_STRATEGY: Strategy = {
  name: 'l1',
  elements: ['l1'],
  requiredOps: ['pchase.batch'],
  // A few batched launches (every SM at once), even at two placements: a small share of a discovery.
  progressWeight: 1,
  measure: measureL1,
  build(raw, _device, calibration) {
    const { element, warnings } = buildL1(raw, calibration);
    return { elements: element ? { l1: element } : {}, warnings };
  },
  ownsSeries: seriesUnder(SERIES),
};
