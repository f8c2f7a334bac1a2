/**
 * Cache line size from strides over arrays just larger than the cache (MT4G
 * §IV-E). A cache of C bytes holds C/ℓ lines. A walk at stride s < ℓ touches
 * every line of an N-byte array, so it thrashes once N > C; at s ≥ ℓ it
 * touches N/s lines, which fit while N/s ≤ C/ℓ. For C < N < 2C the first
 * stride that fits therefore lies in (ℓ, 2ℓ), and ℓ is the power of two just
 * below it. Strides are kept off powers of two above the first (1.125 × 2^k,
 * 1.5 × 2^k) so they spread over the sets instead of aliasing into part of
 * them. A real cache hashes lines to sets, so an array just past its capacity
 * thrashes only partly: a stride "fits" when it leaves at most half the slow
 * loads the smallest stride had. Each array size votes; the sizes' agreement
 * scores the answer.
 */

export interface LineSizePoint {
  sizeBytes: number;
  strideBytes: number;
  samples: readonly number[];
}

export interface LineSizeVote {
  sizeBytes: number;
  /** The first stride whose walk fits the cache, null when none did. */
  firstFittingStrideBytes: number | null;
  lineBytes: number | null;
}

export interface LineSizeFound {
  found: true;
  lineBytes: number;
  votes: LineSizeVote[];
  confidence: number;
}

export interface LineSizeMissing {
  found: false;
  reason: string;
  votes: LineSizeVote[];
}

export type LineSizeResult = LineSizeFound | LineSizeMissing;

/** A stride "fits" when at most this share of the thrashing walks' slow loads remain. */
const FITTING_SHARE = 0.5;
/** The smallest stride must leave at least this share of loads slow: the array overflows the cache. */
const THRASHING_SHARE = 0.2;

/**
 * Strides for a line-size sweep: the fetch granularity, then 1.125× and 1.5×
 * each power of two up to `maxBytes` — no larger power of two: a stride of
 * 2ℓ uses every other set of a cache indexed by line number and thrashes at
 * half the capacity (seen on the simulated L1 at 256 B).
 */
export function lineSizeStrides(fetchGranularityBytes: number, maxBytes: number): number[] {
  const strides = new Set<number>([fetchGranularityBytes]);
  for (let power = fetchGranularityBytes; power < maxBytes; power *= 2) {
    for (const factor of [1.125, 1.5]) strides.add(Math.round((power * factor) / 4) * 4);
  }
  return [...strides].filter((stride) => stride <= maxBytes).sort((a, b) => a - b);
}

export function largestPowerOfTwoAtMost(value: number): number {
  return 2 ** Math.floor(Math.log2(value));
}

export function detectLineSize(points: readonly LineSizePoint[], thresholdCycles: number): LineSizeResult {
  const sizes = [...new Set(points.map((point) => point.sizeBytes))].sort((a, b) => a - b);
  const votes = sizes.map((sizeBytes) =>
    voteOf(
      sizeBytes,
      points.filter((point) => point.sizeBytes === sizeBytes),
      thresholdCycles,
    ),
  );
  const counted = new Map<number, number>();
  for (const vote of votes) if (vote.lineBytes !== null) counted.set(vote.lineBytes, (counted.get(vote.lineBytes) ?? 0) + 1);
  const ranked = [...counted.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const winner = ranked[0];
  if (!winner) return { found: false, reason: 'no array size went from thrashing to fitting as the stride grew', votes };
  return { found: true, lineBytes: winner[0], votes, confidence: Math.round((winner[1] / votes.length) * 1000) / 1000 };
}

function voteOf(sizeBytes: number, points: readonly LineSizePoint[], thresholdCycles: number): LineSizeVote {
  const byStride = [...points].sort((a, b) => a.strideBytes - b.strideBytes);
  const slow = byStride.map((point) => point.samples.filter((value) => value > thresholdCycles).length / Math.max(1, point.samples.length));
  const pivot = slow[0] ?? 0;
  // The smallest stride must thrash, or this size did not exceed the cache.
  if (pivot < THRASHING_SHARE) return { sizeBytes, firstFittingStrideBytes: null, lineBytes: null };
  const index = slow.findIndex(
    (share, i) => i > 0 && share <= pivot * FITTING_SHARE && slow.slice(i).every((later) => later <= pivot * FITTING_SHARE),
  );
  if (index < 0) return { sizeBytes, firstFittingStrideBytes: null, lineBytes: null };
  const stride = byStride[index]!.strideBytes;
  // The first fitting stride lies in (ℓ, 2ℓ]: 2ℓ itself when no stride between was measured.
  return { sizeBytes, firstFittingStrideBytes: stride, lineBytes: largestPowerOfTwoAtMost(stride - 1) };
}
