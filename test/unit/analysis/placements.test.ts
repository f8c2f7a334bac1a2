import { describe, expect, it } from 'vitest';
import { detectSizeChangePoint, fewestSlowPlacement, type PlacedSweepPoint } from '../../../server/analysis/index.js';
import { Prng } from '../../../server/gpu/sim/prng.js';

const HIT_CYCLES = 40;
const MISS_CYCLES = 250;

function samples(rng: Prng, missShare: number, count = 1024): number[] {
  return Array.from({ length: count }, () => Math.round((rng.next() < missShare ? MISS_CYCLES : HIT_CYCLES) + rng.gaussian()));
}

/** Capacity misses past `capacity` at both placements; conflict misses below it at the first placement of every fourth size. */
function placedSweep(capacity: number, seed: number): PlacedSweepPoint[] {
  const rng = new Prng(seed);
  return Array.from({ length: 40 }, (_, i) => {
    const sizeBytes = (i + 1) * 1024;
    const capacityShare = sizeBytes > capacity ? Math.min(1, (sizeBytes - capacity) / 4096 + 0.2) : 0;
    const conflictShare = sizeBytes > capacity / 2 && i % 4 === 1 ? 0.2 : 0;
    return { sizeBytes, placements: [samples(rng, Math.max(capacityShare, conflictShare)), samples(rng, capacityShare)] };
  });
}

describe('fewestSlowPlacement', () => {
  it('keeps a single placement as it is', () => {
    const points = [
      { sizeBytes: 1024, placements: [[1, 2, 3]] },
      { sizeBytes: 2048, placements: [[400, 500]] },
    ];
    expect(fewestSlowPlacement(points)).toEqual([
      { sizeBytes: 1024, samples: [1, 2, 3] },
      { sizeBytes: 2048, samples: [400, 500] },
    ]);
  });

  it('drops conflict misses that only one placement shows, and keeps capacity misses', () => {
    const capacity = 30.5 * 1024;
    const points = placedSweep(capacity, 3);
    const firstOnly = detectSizeChangePoint(points.map(({ sizeBytes, placements }) => ({ sizeBytes, samples: placements[0]! })));
    const reduced = detectSizeChangePoint(fewestSlowPlacement(points));
    expect(firstOnly.found && firstOnly.lastBelowBytes).toBeLessThan(capacity - 1024);
    expect(reduced).toMatchObject({ found: true, lastBelowBytes: 30 * 1024, firstAboveBytes: 31 * 1024 });
    expect(reduced.slowShares.slice(0, 30).every((share) => share < 0.01)).toBe(true);
    expect(reduced.slowShares.slice(30).every((share) => share > 0.15)).toBe(true);
  });
});
