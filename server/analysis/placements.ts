import { slowThreshold, type SweepPoint } from './change-point.js';

/** One size of a sweep measured at one or more placements (allocations) of its array. */
export interface PlacedSweepPoint {
  sizeBytes: number;
  placements: ReadonlyArray<readonly number[]>;
}

/**
 * Keeps, per size, the placement with the fewest slow loads (slow: above
 * the sweep's slowThreshold over all placements). A capacity miss shows at
 * every placement; a conflict miss from the set hash only at some. On an
 * H100 (test/fixtures/h100/discovery-run.json, l1.size.refine.1) sizes well
 * below the L1 had 13–23 % slow loads at one placement (220 KiB: 9.4 % in one
 * batch order, 0 % with the size list reversed), which the step fit read as
 * an early, ragged onset.
 */
export function fewestSlowPlacement(points: readonly PlacedSweepPoint[]): SweepPoint[] {
  if (points.every((point) => point.placements.length === 1)) return points.map(({ sizeBytes, placements }) => ({ sizeBytes, samples: placements[0]! }));
  const threshold = slowThreshold(points.map((point) => ({ sizeBytes: point.sizeBytes, samples: point.placements.flat() })));
  const slowShare = (samples: readonly number[]) => samples.filter((value) => value > threshold).length / samples.length;
  return points.map(({ sizeBytes, placements }) => {
    let best = placements[0] ?? [];
    for (const samples of placements.slice(1)) if (slowShare(samples) < slowShare(best)) best = samples;
    return { sizeBytes, samples: best };
  });
}
