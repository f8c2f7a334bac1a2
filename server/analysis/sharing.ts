import { median } from './descriptive.js';

/**
 * Amount and physical sharing of per-SM caches (thesis §4.5–4.6; MT4G §IV-F,
 * §IV-G): chaser A fills its cache, chaser B walks, A re-reads its array
 * timed. A's re-read missing means B evicted A's lines: the two walks went
 * through one physical cache. These functions only read the re-read's
 * latencies; which walks were paired is the caller's business.
 */

/** What a hit and a miss of A's re-read cost: A's own resident latency and its next level's, raw cycles as recorded. */
export interface ReReadReference {
  hitCycles: number;
  missCycles: number;
}

export type ReReadVerdict =
  | { found: true; evicted: boolean; missShare: number; sampleCount: number; thresholdCycles: number; confidence: number }
  | { found: false; missShare: number | null; sampleCount: number; reason: string };

/** At most this share of A's re-read missing: B left A's lines alone (outliers and a few conflict misses aside). */
export const KEPT_MAX_MISS_SHARE = 0.1;
/** At least this share missing: B evicted A's lines. Between the two the re-read says neither. */
export const EVICTED_MIN_MISS_SHARE = 0.5;
/** A two-class split (no reference) needs its classes this far apart, relative to the slower one. */
const MIN_CLASS_GAP_SHARE = 0.25;

/**
 * Whether A's re-read found its lines evicted. A load is a miss when it is
 * nearer the miss latency than the hit latency (midpoint threshold). Without
 * a reference the samples are split in two classes at their widest gap; a
 * re-read that is one class then says nothing (all hits and all misses look
 * alike without knowing the latencies).
 */
export function classifyReRead(samples: readonly number[], reference: ReReadReference | null): ReReadVerdict {
  const sampleCount = samples.length;
  if (sampleCount === 0) return { found: false, missShare: null, sampleCount, reason: 'no timed loads' };
  let thresholdCycles: number;
  if (reference) {
    if (!(reference.missCycles > reference.hitCycles))
      return { found: false, missShare: null, sampleCount, reason: 'the miss reference is not slower than the hit reference' };
    thresholdCycles = (reference.hitCycles + reference.missCycles) / 2;
  } else {
    const split = twoClassSplit(samples);
    if (split === null)
      return { found: false, missShare: null, sampleCount, reason: 'no hit latency to compare with, and the re-read is one latency class' };
    thresholdCycles = split;
  }
  const missShare = round3(samples.filter((value) => value > thresholdCycles).length / sampleCount);
  if (missShare > KEPT_MAX_MISS_SHARE && missShare < EVICTED_MIN_MISS_SHARE) {
    return {
      found: false,
      missShare,
      sampleCount,
      reason: `${Math.round(missShare * 100)} % of the re-read missed: neither kept nor evicted`,
    };
  }
  const evicted = missShare >= EVICTED_MIN_MISS_SHARE;
  // 1 for a clean verdict (no miss, or every load missing), 0.5 at the verdict's limit; fewer samples, less sure.
  const decisiveness = evicted
    ? 0.5 + (0.5 * (missShare - EVICTED_MIN_MISS_SHARE)) / (0.9 - EVICTED_MIN_MISS_SHARE)
    : 1 - (0.5 * missShare) / KEPT_MAX_MISS_SHARE;
  const confidence = round3(clamp01(decisiveness) * (1 - 1 / Math.sqrt(sampleCount + 1)));
  return { found: true, evicted, missShare, sampleCount, thresholdCycles: round3(thresholdCycles), confidence };
}

/** The midpoint of the widest gap between sorted samples, when it separates two classes well apart; null for one class. */
function twoClassSplit(samples: readonly number[]): number | null {
  const sorted = [...samples].sort((a, b) => a - b);
  // Trim the extremes (rare disturbances of thousands of cycles would make their own class).
  const lo = sorted[Math.floor(sorted.length * 0.01)]!;
  const hi = sorted[Math.ceil(sorted.length * 0.99) - 1]!;
  const kept = sorted.filter((value) => value >= lo && value <= hi);
  let best = 0;
  let at = -1;
  for (let i = 1; i < kept.length; i += 1) {
    const gap = kept[i]! - kept[i - 1]!;
    if (gap > best) {
      best = gap;
      at = i;
    }
  }
  if (at < 0 || best < MIN_CLASS_GAP_SHARE * kept.at(-1)!) return null;
  return (kept[at - 1]! + kept[at]!) / 2;
}

export type SharingDecision = { found: true; shared: boolean; confidence: number } | { found: false; reason: string };

/**
 * Two caches share a physical cache when each direction's re-read found its
 * lines evicted, and are separate when both kept them. Directions that
 * disagree, or either saying nothing, decide nothing.
 */
export function decideSharing(aThenB: ReReadVerdict, bThenA: ReReadVerdict): SharingDecision {
  if (!aThenB.found) return { found: false, reason: `first direction: ${aThenB.reason}` };
  if (!bThenA.found) return { found: false, reason: `second direction: ${bThenA.reason}` };
  if (aThenB.evicted !== bThenA.evicted) {
    return { found: false, reason: `the directions disagree (miss shares ${aThenB.missShare} and ${bThenA.missShare})` };
  }
  return { found: true, shared: aThenB.evicted, confidence: round3(Math.min(aThenB.confidence, bThenA.confidence)) };
}

/** One amount test: chaser A at thread index `a`, B at thread `b` of one block (one SM), both through the same cache. */
export interface PlacementTest {
  a: number;
  b: number;
  verdict: ReReadVerdict;
}

export type CacheCount = { found: true; count: number; groups: number[][]; confidence: number } | { found: false; reason: string };

/**
 * How many caches of one kind an SM has (MT4G §IV-F): thread indices whose
 * walks evict each other's lines use one cache. The placements joined by
 * evicting tests form groups; the count is the number of groups, provided
 * every two groups were seen to keep each other's lines (a test between them
 * said "kept") — otherwise two groups might still be one cache.
 */
export function countCaches(tests: readonly PlacementTest[]): CacheCount {
  if (tests.length === 0) return { found: false, reason: 'no placement tested' };
  const unclear = tests.find((test) => !test.verdict.found);
  if (unclear && !unclear.verdict.found)
    return { found: false, reason: `threads ${unclear.a} and ${unclear.b}: ${unclear.verdict.reason}` };
  const parent = new Map<number, number>();
  const root = (x: number): number => {
    let r = x;
    while (parent.get(r) !== r) r = parent.get(r)!;
    return r;
  };
  for (const { a, b } of tests) for (const x of [a, b]) if (!parent.has(x)) parent.set(x, x);
  for (const test of tests) if (test.verdict.found && test.verdict.evicted) parent.set(root(test.a), root(test.b));
  const byRoot = new Map<number, number[]>();
  for (const x of [...parent.keys()].sort((p, q) => p - q)) {
    const r = root(x);
    byRoot.set(r, [...(byRoot.get(r) ?? []), x]);
  }
  const groups = [...byRoot.values()];
  const rootsApart = new Set(
    tests.filter((test) => test.verdict.found && !test.verdict.evicted).map((test) => pairKey(root(test.a), root(test.b))),
  );
  for (let i = 0; i < groups.length; i += 1) {
    for (let j = i + 1; j < groups.length; j += 1) {
      if (!rootsApart.has(pairKey(root(groups[i]![0]!), root(groups[j]![0]!)))) {
        return { found: false, reason: `threads ${groups[i]![0]} and ${groups[j]![0]} were never tested against each other` };
      }
    }
  }
  const confidence = round3(Math.min(...tests.map((test) => (test.verdict.found ? test.verdict.confidence : 0))));
  return { found: true, count: groups.length, groups, confidence };
}

function pairKey(a: number, b: number): string {
  return a < b ? `${a}:${b}` : `${b}:${a}`;
}

/** A re-read reference from an element's resident samples and its next level's, when both exist. */
export function referenceOf(hitSamples: readonly number[], missSamples: readonly number[]): ReReadReference | null {
  if (hitSamples.length === 0 || missSamples.length === 0) return null;
  return { hitCycles: median(hitSamples), missCycles: median(missSamples) };
}

function clamp01(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
