import { describe, expect, it } from 'vitest';
import { expectedHitShare, fitFetchGranularity, type StridePoint } from '../../../server/analysis/index.js';

const HIT = 40;
const MISS = 300;
const THRESHOLD = (HIT + MISS) / 2;

/** A cold walk at `strideBytes` over units of `granularityBytes`: the first load into each unit misses. */
function coldWalk(strideBytes: number, granularityBytes: number, loads = 256): StridePoint {
  const samples = Array.from({ length: loads }, (_, i) =>
    Math.floor((i * strideBytes) / granularityBytes) !== Math.floor(((i - 1) * strideBytes) / granularityBytes) || i === 0 ? MISS : HIT,
  );
  return { strideBytes, samples };
}

const STRIDES = [4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256];

describe('fitFetchGranularity', () => {
  it.each([32, 64, 128, 256])('recovers a %i B fetch granularity from cold walks', (granularity) => {
    const result = fitFetchGranularity(
      STRIDES.map((stride) => coldWalk(stride, granularity)).concat([coldWalk(512, granularity)]),
      THRESHOLD,
    );
    expect(result).toMatchObject({ found: true, granularityBytes: granularity });
    if (result.found) expect(result.confidence).toBeGreaterThan(0.9);
  });

  it('keeps its answer with a few disturbed loads, and says how sure it is', () => {
    const points = STRIDES.map((stride) => coldWalk(stride, 32));
    const disturbed = points.map((point) => ({ ...point, samples: point.samples.map((v, i) => (i % 50 === 7 ? 1500 : v)) }));
    const result = fitFetchGranularity(disturbed, THRESHOLD);
    expect(result).toMatchObject({ found: true, granularityBytes: 32 });
  });

  it('refuses a walk that was not cold (hits at the largest stride) or shows no hits', () => {
    const warm = STRIDES.map((strideBytes) => ({ strideBytes, samples: Array(64).fill(HIT) }));
    expect(fitFetchGranularity(warm, THRESHOLD)).toMatchObject({ found: false, reason: expect.stringContaining('not cold') });
    const allMiss = STRIDES.map((strideBytes) => ({ strideBytes, samples: Array(64).fill(MISS) }));
    expect(fitFetchGranularity(allMiss, THRESHOLD)).toMatchObject({
      found: false,
      reason: expect.stringContaining('no stride shows hits'),
    });
    expect(
      fitFetchGranularity(
        STRIDES.slice(0, 2).map((s) => coldWalk(s, 32)),
        THRESHOLD,
      ).found,
    ).toBe(false);
  });

  it('models 1 - s/g below the granularity and no hits from it on', () => {
    expect(expectedHitShare(16, 64)).toBe(0.75);
    expect(expectedHitShare(64, 64)).toBe(0);
    expect(expectedHitShare(128, 64)).toBe(0);
  });
});
