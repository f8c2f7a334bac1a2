import { detectSizeChangePoint, fewestSlowPlacement, type ChangePointResult, type SweepPoint } from '../analysis/index.js';
import type { PchaseArgs, PchaseBatchResult, PchaseResult } from '../gpu/protocol.js';
import type { RawSeries } from '../model/document.js';

/**
 * Turns recorded raw series back into size-sweep points. Pure: discovery and
 * re-analysis of stored raw data read measurements the same way. A size
 * measured more than once in one round was measured at several placements of
 * its array (l1.ts); the placement with the fewest slow loads stands for it.
 */
export function sweepPoints(raw: readonly RawSeries[], name: string): SweepPoint[] {
  const bySize = new Map<number, number[][]>();
  const add = (sizeBytes: number, samples: readonly number[]) => {
    const existing = bySize.get(sizeBytes);
    if (existing) existing.push([...samples]);
    else bySize.set(sizeBytes, [[...samples]]);
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

export interface RecordedSearch {
  /** The last round whose change point was found (the search refines from found rounds only). */
  result: ChangePointResult;
  /** The last coarse sweep: its sizes well below the change point give the resident latency. */
  coarse: SweepPoint[];
  /** Every size the search measured (coarse and refining rounds), ascending. */
  points: SweepPoint[];
}

/**
 * Re-reads a size search (size-search.ts) from its raw series; null when none
 * was recorded. The change point is taken over every size the search
 * measured at once (the last coarse sweep merged with the refining rounds):
 * the refined sizes give the resolution, the coarse ones far past the step
 * show how fully the cache misses there, and both score the result.
 */
export function recordedSearch(raw: readonly RawSeries[], prefix: string): RecordedSearch | null {
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
  return points
    .filter((point) => point.sizeBytes <= belowBytes)
    .slice(-maxPoints)
    .flatMap((point) => [...point.samples]);
}
