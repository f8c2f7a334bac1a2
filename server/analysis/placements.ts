import { baselinePointCount, slowThreshold, type SweepPoint } from './change-point.js';

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
  if (points.every((point) => point.placements.length === 1))
    return points.map(({ sizeBytes, placements }) => ({ sizeBytes, samples: placements[0]! }));
  // slowThreshold reads the baseline sizes only: the others' placements are not pooled (a sweep holds hundreds of thousands of samples).
  const baselineCount = baselinePointCount(points.length);
  const threshold = slowThreshold(
    points.map((point, i) => ({
      sizeBytes: point.sizeBytes,
      samples: i < baselineCount ? ([] as number[]).concat(...point.placements) : [],
    })),
  );
  const slowShare = (samples: readonly number[]) => {
    let slow = 0;
    for (const value of samples) if (value > threshold) slow += 1;
    return slow / samples.length;
  };
  return points.map(({ sizeBytes, placements }) => {
    let best = placements[0] ?? [];
    let bestShare = placements.length > 1 ? slowShare(best) : 0;
    for (let i = 1; i < placements.length; i += 1) {
      const share = slowShare(placements[i]!);
      if (share < bestShare) [best, bestShare] = [placements[i]!, share];
    }
    return { sizeBytes, samples: best };
  });
}
