import { describe, expect, it } from 'vitest';
import type { SweepPoint } from '../../../server/analysis/index.js';
import { searchSize, type SizeSearchPlan } from '../../../server/discovery/size-search.js';
import { Prng } from '../../../server/gpu/sim/prng.js';

const KIB = 1024;
const plan: SizeSearchPlan = {
  name: 'test.size',
  lowBytes: 8 * KIB,
  highBytes: 1024 * KIB,
  pointsPerOctave: 8,
  refinePoints: 32,
  refineRounds: 1,
  alignBytes: 128,
  minBytes: 1 * KIB,
  maxBytes: 64 * 1024 * KIB,
  maxWidenings: 2,
};

/** A cache of `capacityBytes` with a sharp step: the runner records which rounds were asked for. */
function cacheRunner(capacityBytes: number) {
  const rng = new Prng(capacityBytes);
  const rounds: Array<{ name: string; sizes: number[] }> = [];
  const run = async (name: string, sizes: number[]): Promise<SweepPoint[]> => {
    rounds.push({ name, sizes });
    return sizes.map((sizeBytes) => ({
      sizeBytes,
      samples: Array.from({ length: 256 }, () => (sizeBytes > capacityBytes ? 300 : 40) + Math.round(2 * rng.gaussian())),
    }));
  };
  return { run, rounds };
}

describe('searchSize', () => {
  it('brackets with a geometric sweep, then refines inside the bracket', async () => {
    const { run, rounds } = cacheRunner(200 * KIB);
    const result = await searchSize(run, plan);
    expect(rounds.map((round) => round.name)).toEqual(['test.size.coarse', 'test.size.refine.1']);
    expect(result.found).toBe(true);
    if (!result.found) return;
    expect(result.lastBelowBytes).toBeLessThanOrEqual(200 * KIB);
    expect(200 * KIB - result.lastBelowBytes).toBeLessThan(2 * KIB);
  });

  it('widens the range when the cache is larger than the first sweep reaches', async () => {
    const { run, rounds } = cacheRunner(3000 * KIB);
    const result = await searchSize(run, plan);
    expect(rounds[1]!.name).toBe('test.size.coarse.2');
    expect(Math.max(...rounds[1]!.sizes)).toBeGreaterThan(3000 * KIB);
    expect(result.found && Math.abs(result.lastBelowBytes - 3000 * KIB) / (3000 * KIB)).toBeLessThan(0.02);
  });

  it('gives up after its widenings when nothing changes', async () => {
    const { run, rounds } = cacheRunner(Number.MAX_SAFE_INTEGER);
    const result = await searchSize(run, plan);
    expect(result.found).toBe(false);
    expect(rounds.length).toBeLessThanOrEqual(plan.maxWidenings + 1);
  });
});
