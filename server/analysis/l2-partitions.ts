import { median, percentileOfSorted, sortedCopy } from './descriptive.js';
import { concatSamples, float64Copy } from './samples.js';

/**
 * The L2's partitions from per-chunk hit latencies seen by every SM
 * (l2.partition, shared mode: chunk c is one address for all SMs). Each chunk
 * is homed in one partition, so one SM's hits fall in a near and a far class;
 * SMs wired to the same partition agree on which chunks are near, SMs wired to
 * the other one see the opposite pattern. Pure: series in, partitions out.
 */
export interface PartitionSeries {
  smId: number;
  /** One latency per chunk, in address order, SM cycles. */
  latenciesCycles: readonly number[];
}

export type L2PartitionAnalysis =
  | {
      found: true;
      /** 2 when the SMs' hits split in two classes, 1 when they are unimodal. */
      count: 1 | 2;
      /** SM ids per group (SMs whose hits split only), each ascending, groups ordered by their lowest SM id; one group when count is 1 or every SM agrees. */
      smGroups: number[][];
      /** Every SM's near-class (count 1: every) hit latency, and its far-class ones (empty when count is 1). */
      nearSamples: number[];
      farSamples: number[];
      nearP50: number;
      farP50: number | null;
      /** 0..1: how cleanly the classes split, how well SMs agree with their group and groups anti-agree. */
      confidence: number;
      /** SMs whose own hits did not split in two (too few chunks in a class, or classes too close). */
      unsplitSmIds: number[];
    }
  | { found: false; reason: string };

/** Hits are the loads within this factor of an SM's fastest ones (5th percentile); slower ones missed or were disturbed. */
const HIT_SPAN = 1.6;
/** Each class must hold this share of an SM's hits. */
const MIN_CLASS_SHARE = 0.1;
/** Two classes when the band between them holds at most this share of the hits around the emptier class's median (splitHits' dip). */
const MAX_DIP = 0.6;
/** At least this share of SMs must split for the L2 to count as partitioned. */
const MIN_SPLIT_SHARE = 0.5;
const MIN_CHUNKS = 16;
const REFINE_ROUNDS = 4;
/** Groups count as consistent when SMs agree with their group's consensus, and the two consensuses disagree, this far past chance (0: chance, 1: every chunk). */
const MIN_FIT = 0.5;

/** A chunk's class in an SM's pattern (or a group's consensus): typed, as patterns are compared chunk by chunk many times over. */
const NOT_A_HIT = -1;
const NEAR = 0;
const FAR = 1;

interface SmSplit {
  smId: number;
  latencies: readonly number[];
  /** Per chunk: FAR, NEAR or NOT_A_HIT. */
  far: Int8Array;
  /** Whether k-means found two classes of plausible shares (clean or not: see dip). */
  split: boolean;
  dip: number;
}

/**
 * Several launches' series joined per SM: each SM's latencies of every run
 * one after another (a run's chunks are one array's, the same addresses for
 * all SMs of that run, but runs may sit at other addresses, so chunks of two
 * runs are never merged). A run without an SM leaves NaN (no sample) in its
 * place; a second block on one SM within a run is dropped. SMs ascending.
 */
export function joinRuns(runs: ReadonlyArray<readonly PartitionSeries[]>): PartitionSeries[] {
  const ids = [...new Set(runs.flatMap((run) => run.map((s) => s.smId)))].sort((a, b) => a - b);
  const perRun = runs.map((run) => {
    const bySm = new Map<number, readonly number[]>();
    let chunks = 0;
    for (const s of run) {
      if (!bySm.has(s.smId)) bySm.set(s.smId, s.latenciesCycles);
      chunks = Math.max(chunks, s.latenciesCycles.length);
    }
    return { bySm, chunks };
  });
  return ids.map((smId) => {
    const latenciesCycles: number[] = [];
    for (const { bySm, chunks } of perRun) {
      const own = bySm.get(smId) ?? [];
      for (let c = 0; c < chunks; c += 1) latenciesCycles.push(own[c] ?? Number.NaN);
    }
    return { smId, latenciesCycles };
  });
}

/**
 * Two classes of one SM's hits: 1-D k-means (k = 2) started at the 10th and
 * 90th percentiles, threshold halfway between the class means. `dip` is the
 * share of hits in the band of half the gap around the threshold over the
 * smaller of the like bands around each class median: near 0 for two clean
 * classes, above 1 for one class (its densest part is its middle).
 */
export function splitHits(latencies: readonly number[]): HitSplit | null {
  const timed = latencies.filter(Number.isFinite);
  if (timed.length === 0) return null;
  return splitTimedHits(float64Copy(timed), sortedCopy(timed));
}

export interface HitSplit {
  threshold: number;
  nearMedian: number;
  farMedian: number;
  dip: number;
  nearShare: number;
}

/**
 * splitHits over an SM's timed latencies, given them sorted too: the hits are
 * a prefix of the sorted ones (percentiles, medians and band counts read it),
 * while the class means sum the hits in recorded order, as a mean of each
 * class's values would.
 */
function splitTimedHits(timed: Float64Array, sorted: Float64Array): HitSplit | null {
  const hitLimit = percentileOfSorted(sorted, 5) * HIT_SPAN;
  const hits = sorted.subarray(0, countAtMost(sorted, hitLimit));
  if (hits.length < MIN_CHUNKS) return null;
  let lowMean = percentileOfSorted(hits, 10);
  let highMean = percentileOfSorted(hits, 90);
  if (highMean <= lowMean) return { threshold: highMean, nearMedian: lowMean, farMedian: highMean, dip: Infinity, nearShare: 1 };
  let threshold = (lowMean + highMean) / 2;
  for (let round = 0; round < 50; round += 1) {
    const sums = classSums(timed, hitLimit, threshold);
    const highCount = hits.length - sums.lowCount;
    if (sums.lowCount === 0 || highCount === 0) break;
    lowMean = sums.lowSum / sums.lowCount;
    highMean = sums.highSum / highCount;
    const next = (lowMean + highMean) / 2;
    if (next === threshold) break;
    threshold = next;
  }
  const nearCount = countAtMost(hits, threshold);
  if (nearCount === 0 || nearCount === hits.length) return null;
  const nearMedian = percentileOfSorted(hits.subarray(0, nearCount), 50);
  const farMedian = percentileOfSorted(hits.subarray(nearCount), 50);
  const half = Math.max(0.5, (farMedian - nearMedian) / 4);
  const dip =
    countWithin(hits, threshold, half) / Math.max(1, Math.min(countWithin(hits, nearMedian, half), countWithin(hits, farMedian, half)));
  return { threshold, nearMedian, farMedian, dip, nearShare: nearCount / hits.length };
}

/** The hits' (values at most hitLimit) sums at or below the threshold and above it, in recorded order, and the count below. */
function classSums(timed: Float64Array, hitLimit: number, threshold: number): { lowSum: number; highSum: number; lowCount: number } {
  let lowSum = 0;
  let highSum = 0;
  let lowCount = 0;
  for (let i = 0; i < timed.length; i += 1) {
    const x = timed[i]!;
    if (!(x <= hitLimit)) continue;
    if (x <= threshold) {
      lowSum += x;
      lowCount += 1;
    } else highSum += x;
  }
  return { lowSum, highSum, lowCount };
}

/** How many of the sorted values are at most `limit`. */
function countAtMost(sorted: Float64Array, limit: number): number {
  return firstIndex(sorted, (x) => !(x <= limit));
}

/** How many of the sorted values lie within `half` of `center` (|x − center| ≤ half: a run of the sorted values, as x − center rises with x). */
function countWithin(sorted: Float64Array, center: number, half: number): number {
  return firstIndex(sorted, (x) => x - center > half) - firstIndex(sorted, (x) => x - center >= -half);
}

/** The first index whose value satisfies a predicate that holds from some index on (sorted.length when none does). */
function firstIndex(sorted: Float64Array, holds: (value: number) => boolean): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (holds(sorted[mid]!)) high = mid;
    else low = mid + 1;
  }
  return low;
}

function classify(series: PartitionSeries): SmSplit {
  const latencies = float64Copy(series.latenciesCycles);
  const timed = finiteOnly(latencies);
  const sorted = sortedCopy(timed);
  const split = timed.length > 0 ? splitTimedHits(timed, sorted) : null;
  const floor = timed.length > 0 ? percentileOfSorted(sorted, 5) : 0;
  const two = split !== null && split.nearShare >= MIN_CLASS_SHARE && split.nearShare <= 1 - MIN_CLASS_SHARE;
  return {
    smId: series.smId,
    latencies: series.latenciesCycles,
    far: pattern(latencies, floor * HIT_SPAN, two ? split.threshold : Infinity),
    split: two,
    dip: split?.dip ?? Infinity,
  };
}

function finiteOnly(values: Float64Array): Float64Array {
  let count = 0;
  for (let i = 0; i < values.length; i += 1) if (Number.isFinite(values[i])) count += 1;
  const out = new Float64Array(count);
  let at = 0;
  for (let i = 0; i < values.length; i += 1) if (Number.isFinite(values[i])) out[at++] = values[i]!;
  return out;
}

/** Per chunk: NOT_A_HIT above the hit limit (or untimed), FAR above the threshold, NEAR otherwise. */
function pattern(latencies: Float64Array, hitLimit: number, farAbove: number): Int8Array {
  const far = new Int8Array(latencies.length);
  for (let c = 0; c < latencies.length; c += 1) {
    const x = latencies[c]!;
    far[c] = !Number.isFinite(x) || x > hitLimit ? NOT_A_HIT : x > farAbove ? FAR : NEAR;
  }
  return far;
}

/** Share of chunks classified by both where the two patterns agree (0.5 when none are). */
function agreement(a: Int8Array, b: Int8Array): number {
  let same = 0;
  let both = 0;
  const n = Math.min(a.length, b.length);
  for (let c = 0; c < n; c += 1) {
    if (a[c] === NOT_A_HIT || b[c] === NOT_A_HIT) continue;
    both += 1;
    if (a[c] === b[c]) same += 1;
  }
  return both === 0 ? 0.5 : same / both;
}

/** The majority pattern of a group, chunk by chunk (NOT_A_HIT where none of it classified the chunk). */
function consensus(members: readonly SmSplit[], chunks: number): Int8Array {
  const far = new Uint32Array(chunks);
  const seen = new Uint32Array(chunks);
  for (const m of members) tally(m.far, far, seen);
  return majority(far, seen);
}

function tally(pattern: Int8Array, far: Uint32Array, seen: Uint32Array): void {
  const n = Math.min(seen.length, pattern.length);
  for (let c = 0; c < n; c += 1) {
    const v = pattern[c]!;
    if (v === NOT_A_HIT) continue;
    seen[c]! += 1;
    if (v === FAR) far[c]! += 1;
  }
}

function majority(far: Uint32Array, seen: Uint32Array): Int8Array {
  const pattern = new Int8Array(seen.length);
  for (let c = 0; c < seen.length; c += 1) pattern[c] = seen[c] === 0 ? NOT_A_HIT : far[c]! * 2 > seen[c]! ? FAR : NEAR;
  return pattern;
}

/** An SM's latencies of the chunks whose class is `kind` (NEAR or FAR), or of every hit (NOT_A_HIT: any but that). */
function latenciesOf(s: SmSplit, kind: number): number[] {
  const out: number[] = [];
  for (let c = 0; c < s.far.length; c += 1) {
    const v = s.far[c];
    if (kind === NOT_A_HIT ? v !== NOT_A_HIT : v === kind) out.push(s.latencies[c]!);
  }
  return out;
}

/** `runs`: one entry per launch, every SM's series of that launch (joinRuns). */
export function analyseL2Partitions(runs: ReadonlyArray<readonly PartitionSeries[]>): L2PartitionAnalysis {
  const merged = joinRuns(runs).filter((s) => timedCount(s.latenciesCycles) >= MIN_CHUNKS);
  if (merged.length === 0) return { found: false, reason: `no SM timed ${MIN_CHUNKS} or more chunks` };
  const sms = merged.map(classify);
  const splitSms = sms.filter((s) => s.split);
  const unimodal = (): L2PartitionAnalysis => {
    const nearSamples = concatSamples(sms.map((s) => latenciesOf(s, NOT_A_HIT)));
    const dips = sms.map((s) => Math.min(1, s.dip / (2 * MAX_DIP)));
    return {
      found: true,
      count: 1,
      smGroups: [sms.map((s) => s.smId)],
      nearSamples,
      farSamples: [],
      nearP50: median(nearSamples),
      farP50: null,
      confidence: round3(mean(dips)),
      unsplitSmIds: sms.map((s) => s.smId),
    };
  };
  if (splitSms.length < sms.length * MIN_SPLIT_SHARE) return unimodal();

  // Groups: start from agreement with the first split SM, then refine against the first group's consensus.
  const chunks = Math.max(...sms.map((s) => s.far.length));
  const reference = splitSms[0]!;
  let inFirst = new Map(splitSms.map((s) => [s.smId, agreement(s.far, reference.far) >= 0.5]));
  for (let round = 0; round < REFINE_ROUNDS; round += 1) {
    const first = consensus(
      splitSms.filter((s) => inFirst.get(s.smId)),
      chunks,
    );
    const next = new Map(splitSms.map((s) => [s.smId, agreement(s.far, first) >= 0.5]));
    if ([...next].every(([id, v]) => inFirst.get(id) === v)) break;
    inFirst = next;
  }
  const groups = [splitSms.filter((s) => inFirst.get(s.smId)), splitSms.filter((s) => !inFirst.get(s.smId))].filter((g) => g.length > 0);
  // Agreement of every SM with its own group's consensus (1: every chunk matches, 0: chance), and of the groups with each other (1: opposite everywhere).
  const patterns = groups.map((g) => consensus(g, chunks));
  const fits = groups.flatMap((g, i) => g.map((s) => Math.max(0, 2 * agreement(s.far, patterns[i]!) - 1)));
  const antiAgreement = patterns.length === 2 ? Math.max(0, 1 - 2 * agreement(patterns[0]!, patterns[1]!)) : 0;
  const clean = median(splitSms.map((s) => s.dip)) <= MAX_DIP;
  const consistent = mean(fits) >= MIN_FIT && antiAgreement >= MIN_FIT;
  // Two classes per SM, or noisy classes that SMs still agree on chunk by chunk: partitions. Neither: one class split at random.
  if (!clean && !consistent) return unimodal();
  const nearSamples = concatSamples(splitSms.map((s) => latenciesOf(s, NEAR)));
  const farSamples = concatSamples(splitSms.map((s) => latenciesOf(s, FAR)));
  const smGroups = groups.map((g) => g.map((s) => s.smId).sort((a, b) => a - b)).sort((a, b) => a[0]! - b[0]!);
  const separation = mean(splitSms.map((s) => Math.max(0, 1 - s.dip)));
  return {
    found: true,
    count: 2,
    smGroups,
    nearSamples,
    farSamples,
    nearP50: median(nearSamples),
    farP50: median(farSamples),
    confidence: round3(Math.max(separation, mean(fits) * antiAgreement) * (splitSms.length / sms.length)),
    unsplitSmIds: sms.filter((s) => !s.split).map((s) => s.smId),
  };
}

function timedCount(latencies: readonly number[]): number {
  let timed = 0;
  for (const x of latencies) if (Number.isFinite(x)) timed += 1;
  return timed;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((s, x) => s + x, 0) / values.length;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
