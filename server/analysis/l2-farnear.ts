import { median } from './descriptive.js';
import { splitHits } from './l2-partitions.js';

/**
 * The L2 past one partition and device memory, from l2.farnear and
 * l2.persist series (issue 9). Pure: series in, classes and shares out.
 *
 * - Past one partition's capacity (private walks, one SM per group): far-homed
 *   lines still hit in their home partition at their own cost, near-homed ones
 *   come from device memory: two classes, the faster one far-partition hits
 *   past capacity, the slower one near device memory.
 * - Past the whole L2: both classes are device memory, near-homed (faster)
 *   and far-homed. The slower class past one partition and the faster one past
 *   the L2 are both near device memory: their agreement is the check.
 * The chunk near/far map of l2.partition is one array's (another allocation's
 * addresses), so classes are told apart by latency here, not by that map.
 */
export interface FarnearSeries {
  smId: number;
  latenciesCycles: readonly number[];
}

export interface LatencyClasses {
  lowSamples: number[];
  highSamples: number[];
  lowP50: number;
  highP50: number;
  /** Share of the timed chunks in the low class. */
  lowShare: number;
}

/** Within this factor of each other two medians count as one latency (near device memory seen twice). */
const AGREE = 0.15;
/** A class must hold at least this share of the chunks. */
const MIN_CLASS_SHARE = 0.1;
/** Two classes only where the band between them is this sparse (splitHits' dip, as l2-partitions.ts). */
const MAX_DIP = 0.6;
/** A first SM whose lines survived keeps at least this share of its chunks as near-partition hits. */
export const SURVIVED_SHARE = 0.9;

/** Two latency classes of several SMs' chunks together (1-D k-means through splitHits); null without two classes. */
export function latencyClasses(series: readonly FarnearSeries[]): LatencyClasses | null {
  const all = series.flatMap((s) => s.latenciesCycles.filter(Number.isFinite));
  const split = splitHits(all);
  if (!split || split.dip > MAX_DIP || split.nearShare < MIN_CLASS_SHARE || split.nearShare > 1 - MIN_CLASS_SHARE) return null;
  const lowSamples = all.filter((x) => x <= split.threshold);
  const highSamples = all.filter((x) => x > split.threshold && x <= 2 * split.farMedian);
  if (lowSamples.length === 0 || highSamples.length === 0) return null;
  return { lowSamples, highSamples, lowP50: median(lowSamples), highP50: median(highSamples), lowShare: lowSamples.length / all.length };
}

export interface FarnearAnalysis {
  /** Far-partition hits past one partition's capacity (the faster class past one partition). */
  farBeyondSamples: number[] | null;
  deviceMemoryNearSamples: number[] | null;
  deviceMemoryFarSamples: number[] | null;
  /** 0..1: 1 when near device memory seen past one partition and past the L2 agree. */
  confidence: number;
  warnings: string[];
}

/** `beyond`: private walks past one partition's capacity; `dram`: private walks past the whole L2. Either may be empty. */
export function analyseFarnear(beyond: readonly FarnearSeries[], dram: readonly FarnearSeries[]): FarnearAnalysis {
  const warnings: string[] = [];
  const past = beyond.length > 0 ? latencyClasses(beyond) : null;
  let memory = dram.length > 0 ? latencyClasses(dram) : null;
  if (beyond.length > 0 && !past)
    warnings.push('past one partition the loads did not split in far-partition hits and device-memory misses');
  if (dram.length > 0 && !memory) {
    // One class: near- and far-homed misses cost the same (a GPU whose memory controllers are all one distance
    // away); both fields carry it, no warning.
    const all = dram.flatMap((s) => s.latenciesCycles.filter(Number.isFinite));
    if (all.length > 0) {
      const p50 = median(all);
      memory = { lowSamples: all, highSamples: all, lowP50: p50, highP50: p50, lowShare: 1 };
    }
  }
  let confidence = 0.5;
  if (past && memory) {
    const gap = Math.abs(past.highP50 - memory.lowP50) / memory.lowP50;
    confidence = gap <= AGREE ? 1 - gap : 0.3;
    if (gap > AGREE)
      warnings.push(`near device memory past one partition (${past.highP50} cycles) and past the L2 (${memory.lowP50}) disagree`);
  }
  return {
    farBeyondSamples: past?.lowSamples ?? null,
    // Past the L2 the near class is device memory alone; past one partition it is the slower class.
    deviceMemoryNearSamples: memory?.lowSamples ?? past?.highSamples ?? null,
    deviceMemoryFarSamples: memory?.highSamples ?? null,
    confidence,
    warnings,
  };
}

/** Share of a series' chunks at or below a threshold (hits), 0 for an empty series. */
export function hitShare(latencies: readonly number[], threshold: number): number {
  const timed = latencies.filter(Number.isFinite);
  return timed.length === 0 ? 0 : timed.filter((x) => x <= threshold).length / timed.length;
}

export interface SharedCapacity {
  /** Per size measured, ascending: the first SM's share of chunks still near-partition hits after the second SM's walk. */
  points: Array<{ arrayBytes: number; survivedShare: number }>;
  /** Midway between the largest size that survived and the smallest that did not; null unless the sizes bracket it. */
  capacityBytes: number | null;
  survivedBelowBytes: number | null;
  lostFromBytes: number | null;
}

/**
 * The capacity for data both SM groups read: shared-mode walks of a few
 * sizes, the first SM timed after the second walked the same lines. Its lines
 * survived where its chunks still hit in its near partition (at or below
 * `hitThresholdCycles`, between the far hit and a far-partition hit past capacity).
 */
export function analyseSharedCapacity(
  runs: ReadonlyArray<{ arrayBytes: number; first: FarnearSeries }>,
  hitThresholdCycles: number,
): SharedCapacity {
  const points = runs
    .map((r) => ({ arrayBytes: r.arrayBytes, survivedShare: hitShare(r.first.latenciesCycles, hitThresholdCycles) }))
    .sort((a, b) => a.arrayBytes - b.arrayBytes);
  const survived = points.filter((p) => p.survivedShare >= SURVIVED_SHARE);
  const survivedBelowBytes = survived.length > 0 ? survived[survived.length - 1]!.arrayBytes : null;
  const lost = points.find((p) => p.survivedShare < SURVIVED_SHARE && (survivedBelowBytes === null || p.arrayBytes > survivedBelowBytes));
  const lostFromBytes = lost?.arrayBytes ?? null;
  const capacityBytes = survivedBelowBytes !== null && lostFromBytes !== null ? Math.round((survivedBelowBytes + lostFromBytes) / 2) : null;
  return { points, capacityBytes, survivedBelowBytes, lostFromBytes };
}

/** l2.persist: the share of window samples that hit (at or below the threshold) without and with the persisting window. */
export function analysePersist(
  result: { withoutCycles: readonly number[]; withCycles: readonly number[] },
  hitThresholdCycles: number,
): { hitRateWithout: number; hitRateWith: number } {
  const round3 = (x: number) => Math.round(x * 1000) / 1000;
  return {
    hitRateWithout: round3(hitShare(result.withoutCycles, hitThresholdCycles)),
    hitRateWith: round3(hitShare(result.withCycles, hitThresholdCycles)),
  };
}
