import { concatSamples, detectSizeChangePoint, fewestSlowPlacement, type ChangePointResult, type SweepPoint } from '../analysis/index.js';
import type { PchaseArgs, PchaseBatchResult, PchaseResult } from '../protocol/ops.js';
import type { RawSeries } from '../model/document.js';

/**
 * Turns recorded raw series back into size-sweep points. Pure: discovery and
 * re-analysis of stored raw data read measurements the same way. A size
 * measured more than once in one round was measured at several placements of
 * its array (l1.ts); the placement with the fewest slow loads stands for it.
 */
export function sweepPoints(raw: readonly RawSeries[], name: string): SweepPoint[] {
  const bySize = new Map<number, Array<readonly number[]>>();
  // The recorded arrays themselves, read-only from here on (SweepPoint.samples): a sweep holds hundreds of thousands of samples.
  const add = (sizeBytes: number, samples: readonly number[]) => {
    const existing = bySize.get(sizeBytes);
    if (existing) existing.push(samples);
    else bySize.set(sizeBytes, [samples]);
  };
  for (const series of raw) {
    if (series.name !== name) continue;
    if (series.op === 'pchase.batch') {
      for (const entry of (series.result as PchaseBatchResult).series) add(entry.arrayBytes, entry.latenciesCycles);
    } else if (series.op === 'pchase') {
      add((series.args as PchaseArgs).arrayBytes, (series.result as PchaseResult).latenciesCycles);
    }
  }
  const placed = [...bySize.entries()].sort(([a], [b]) => a - b).map(([sizeBytes, placements]) => ({ sizeBytes, placements }));
  return fewestSlowPlacement(placed);
}

/** Names of the recorded series that start with `prefix`, in recording order, without repeats. */
export function seriesNames(raw: readonly RawSeries[], prefix: string): string[] {
  return [...new Set(raw.filter((series) => series.name.startsWith(prefix)).map((series) => series.name))];
}

/** Shared by every reader of one search (recordedSearch): read-only. */
export interface RecordedSearch {
  /** The last round whose change point was found (the search refines from found rounds only). */
  readonly result: ChangePointResult;
  /** The last coarse sweep: its sizes well below the change point give the resident latency. */
  readonly coarse: readonly SweepPoint[];
  /** Every size the search measured (coarse and refining rounds), ascending. */
  readonly points: readonly SweepPoint[];
}

/**
 * Searches already read, under the first series each was read from, by
 * prefix. One search is read by several strategies (a per-SM cache's build,
 * the sharing strategy's references and sizes, the L2's capacity fit) and by
 * each round of its own measurement: the change point over a few hundred
 * thousand samples is analysed once per set of series. Recorded series are
 * never changed in place (a session appends or drops whole series), so the
 * same series objects in the same order read as the same search; held
 * weakly, an entry goes with its series.
 */
const readSearches = new WeakMap<RawSeries, Map<string, { series: readonly RawSeries[]; search: RecordedSearch | null }>>();

/**
 * Re-reads a size search (size-search.ts) from its raw series; null when none
 * was recorded. The change point is taken over every size the search
 * measured at once (the last coarse sweep merged with the refining rounds):
 * the refined sizes give the resolution, the coarse ones far past the step
 * show how fully the cache misses there, and both score the result.
 */
export function recordedSearch(raw: readonly RawSeries[], prefix: string): RecordedSearch | null {
  const series = raw.filter((one) => one.name.startsWith(`${prefix}.`));
  const first = series[0];
  if (first === undefined) return null;
  const byPrefix = readSearches.get(first) ?? new Map<string, { series: readonly RawSeries[]; search: RecordedSearch | null }>();
  const cached = byPrefix.get(prefix);
  if (cached && cached.series.length === series.length && cached.series.every((one, i) => one === series[i])) return cached.search;
  const search = readSearch(series, prefix);
  byPrefix.set(prefix, { series, search });
  readSearches.set(first, byPrefix);
  return search;
}

/** recordedSearch over the series under its prefix. */
function readSearch(raw: readonly RawSeries[], prefix: string): RecordedSearch | null {
  const names = seriesNames(raw, `${prefix}.`);
  const coarseNames = names.filter((name) => name.startsWith(`${prefix}.coarse`));
  const coarseName = coarseNames.at(-1);
  if (coarseName === undefined) return null;
  const coarse = sweepPoints(raw, coarseName);
  const refineNames = names.filter((name) => name.startsWith(`${prefix}.refine`));
  const merged = new Map<number, SweepPoint>(coarse.map((point) => [point.sizeBytes, point]));
  for (const name of refineNames) for (const point of sweepPoints(raw, name)) merged.set(point.sizeBytes, point);
  const all = [...merged.values()].sort((a, b) => a.sizeBytes - b.sizeBytes);
  return { result: detectSizeChangePoint(all), coarse, points: all };
}

/** Samples of up to `maxPoints` of the largest sizes at or below `belowBytes`. */
export function residentSamples(points: readonly SweepPoint[], belowBytes: number, maxPoints: number): number[] {
  const chosen = points
    .filter((point) => point.sizeBytes <= belowBytes)
    .slice(-maxPoints)
    .map((point) => point.samples);
  return concatSamples(chosen);
}
