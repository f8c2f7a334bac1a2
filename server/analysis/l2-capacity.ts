import { median, percentile } from './descriptive.js';
import { concatSamples } from './samples.js';

/**
 * One L2 partition's capacity from a fit of the miss fraction over a whole
 * size sweep (issue 9, "measure, don't assume"), not from the onset alone.
 *
 * Each load of a sweep point is a hit in the SM's near partition or not (a
 * two-class split: the near-partition hit class of the smallest sizes against
 * everything slower — far-partition hits ~465 cycles and device memory
 * ~570/750 on an H100 both left the near partition); m(S) is the share of
 * misses at array size S, over every size from just below the onset to the
 * end of the sweep.
 *
 * Model ('set-overflow'): a set-associative cache with a hashed set index and
 * LRU-like replacement, walked cyclically, misses on every line of a set that
 * holds more lines than it has ways (each line is evicted just before the walk
 * comes round to it) and on none of the others. Set i takes a share p_i of the
 * array's lines and overflows from S_i = ways × line / p_i, so m(S) is the
 * line-weighted share of sets with S_i < S: a distribution function of S_i
 * with weights p_i. Its mean is Σ p_i S_i = sets × ways × line, the capacity,
 * exactly — whatever the spread of set loads: C = ∫ (1 − m(S)) dS. The onset
 * is where the most loaded set first overflows, below C by the spread of set
 * loads, which is why the onset alone reads low (24.1 MiB on the recorded H100
 * runs, where MT4G reports 25 MiB). m(S) is fitted by least squares under the
 * one thing the model demands of it, that it never falls as S grows (isotonic
 * regression, pool-adjacent-violators), and C is the area above the fit.
 *
 * Model ('random'): random replacement keeps a random C/S of the array, so
 * m(S) ≈ 1 − C/S never reaches 1 (thesis §4.2 on non-LRU caches); it stands
 * when the fitted m(S) stays below RANDOM_BELOW at the largest size, and C is
 * then its least-squares fit.
 *
 * The confidence falls with the RMS residual of the fit (noise across sizes:
 * a miss share off by 0.25 on average is worth nothing) and with few sizes on
 * the ramp between no and all misses.
 */

export interface CapacityPoint {
  sizeBytes: number;
  samples: readonly number[];
}

export type CapacityModel = 'set-overflow' | 'random';

export type L2CapacityFit =
  | {
      found: true;
      capacityBytes: number;
      model: CapacityModel;
      /** Sizes over which the set-overflow fit rises from 10 % to 90 % misses (bytes); 0 for 'random'. */
      widthBytes: number;
      /** Latency (cycles) above which a load left the near partition. */
      missThresholdCycles: number;
      /** RMS of m(S) − model over the fitted points. */
      rmsResidual: number;
      /** Fitted points (sizes) and those with 0 < m < 1 (on the ramp). */
      pointCount: number;
      rampPoints: number;
      /** The miss share per fitted size, ascending. */
      missShares: { sizeBytes: number; missShare: number }[];
      confidence: number;
    }
  | { found: false; reason: string };

/** Points from this share of the onset on join the fit: a few wholly-hit sizes pin the zero side. */
const FIT_FROM_SHARE_OF_ONSET = 0.9;
/** The miss threshold lies this share of the way from the hit median to the slowest class's median above the hits' 99th percentile. */
const THRESHOLD_SHARE = 0.1;
const MIN_POINTS = 4;
/** A fitted miss share still below this at the largest size reads as random replacement. */
const RANDOM_BELOW = 0.9;

/**
 * Fits one partition's capacity. `onsetBytes` is the change point's last
 * size below the step (the sizes wholly hit below it give the hit class);
 * points in any order.
 */
export function fitL2Capacity(points: readonly CapacityPoint[], onsetBytes: number): L2CapacityFit {
  const sorted = [...points].filter((point) => point.samples.length > 0).sort((a, b) => a.sizeBytes - b.sizeBytes);
  const residentPoints = sorted.filter((point) => point.sizeBytes <= onsetBytes * FIT_FROM_SHARE_OF_ONSET).map((point) => point.samples);
  const resident = concatSamples(residentPoints);
  const largest = sorted.at(-1);
  if (resident.length === 0 || !largest || largest.sizeBytes <= onsetBytes)
    return { found: false, reason: 'no sizes both well below and above the onset' };
  const hitP50 = median(resident);
  const hitP99 = percentile(resident, 99);
  const slowP50 = median(largest.samples);
  if (slowP50 <= hitP99) return { found: false, reason: 'the largest size is no slower than the resident ones' };
  // Just above the hit class (near- and far-homed hits in the near partition): far-partition hits lie well above it.
  const threshold = hitP99 + THRESHOLD_SHARE * (slowP50 - hitP50);
  const fitted = sorted.filter((point) => point.sizeBytes >= onsetBytes * FIT_FROM_SHARE_OF_ONSET);
  if (fitted.length < MIN_POINTS) return { found: false, reason: `${fitted.length} sizes past the onset, ${MIN_POINTS} needed` };
  const shares = fitted.map((point) => ({
    sizeBytes: point.sizeBytes,
    missShare: point.samples.filter((v) => v > threshold).length / point.samples.length,
  }));
  const rampPoints = shares.filter((s) => s.missShare > 0.02 && s.missShare < 0.98).length;
  const isotonic = isotonicFit(shares.map((share) => share.missShare));
  const reachesFull = isotonic.at(-1)! >= RANDOM_BELOW;
  const best = reachesFull
    ? {
        capacityBytes: areaAbove(shares, isotonic),
        widthBytes: rampWidth(shares, isotonic),
        sse: sseOf(shares, isotonic),
        model: 'set-overflow' as const,
      }
    : { ...fitRandom(shares, onsetBytes), model: 'random' as const };
  const rmsResidual = Math.sqrt(best.sse / shares.length);
  const rampFactor = rampPoints >= 2 ? 1 : 0.8;
  const confidence = round3(Math.max(0, 1 - 4 * rmsResidual) * rampFactor);
  return {
    found: true,
    capacityBytes: Math.round(best.capacityBytes),
    model: best.model,
    widthBytes: Math.round(best.widthBytes),
    missThresholdCycles: Math.round(threshold),
    rmsResidual: round3(rmsResidual),
    pointCount: shares.length,
    rampPoints,
    missShares: shares,
    confidence,
  };
}

interface Fit {
  capacityBytes: number;
  widthBytes: number;
  sse: number;
}

type Share = { sizeBytes: number; missShare: number };

function sse(shares: readonly Share[], model: (size: number) => number): number {
  let total = 0;
  for (const { sizeBytes, missShare } of shares) total += (missShare - model(sizeBytes)) ** 2;
  return total;
}

/** Capacities tried: from half the onset to the largest size, in steps of `step`. */
function capacityGrid(onsetBytes: number, highBytes: number, step: number): number[] {
  const grid: number[] = [];
  for (let c = onsetBytes * 0.5; c <= highBytes; c += step) grid.push(c);
  return grid;
}

/** Least-squares non-decreasing fit (pool adjacent violators), equal weights. */
export function isotonicFit(values: readonly number[]): number[] {
  const blocks: { sum: number; count: number }[] = [];
  for (const value of values) {
    blocks.push({ sum: value, count: 1 });
    while (blocks.length > 1 && blocks.at(-2)!.sum / blocks.at(-2)!.count > blocks.at(-1)!.sum / blocks.at(-1)!.count) {
      const last = blocks.pop()!;
      blocks.at(-1)!.sum += last.sum;
      blocks.at(-1)!.count += last.count;
    }
  }
  return blocks.flatMap((block) => Array<number>(block.count).fill(block.sum / block.count));
}

/** ∫ (1 − m(S)) dS from 0: m is 0 below the first size, linear between sizes, 1 past the last. */
function areaAbove(shares: readonly Share[], fitted: readonly number[]): number {
  let area = shares[0]!.sizeBytes * (1 - fitted[0]!);
  for (let i = 1; i < shares.length; i += 1) {
    area += (shares[i]!.sizeBytes - shares[i - 1]!.sizeBytes) * (1 - (fitted[i]! + fitted[i - 1]!) / 2);
  }
  return area;
}

/** The sizes between which the fit rises from 10 % to 90 % of the misses. */
function rampWidth(shares: readonly Share[], fitted: readonly number[]): number {
  const at = (level: number) =>
    shares[
      Math.max(
        0,
        fitted.findIndex((m) => m >= level),
      )
    ]!.sizeBytes;
  return at(0.9) - at(0.1);
}

function sseOf(shares: readonly Share[], fitted: readonly number[]): number {
  return shares.reduce((total, share, i) => total + (share.missShare - fitted[i]!) ** 2, 0);
}

function fitRandom(shares: readonly Share[], onsetBytes: number): Fit {
  const high = shares.at(-1)!.sizeBytes;
  let best: Fit = { capacityBytes: onsetBytes, widthBytes: 0, sse: Infinity };
  for (const c of capacityGrid(onsetBytes, high, onsetBytes / 2000)) {
    const value = sse(shares, (size) => Math.max(0, 1 - c / size));
    if (value < best.sse) best = { capacityBytes: c, widthBytes: 0, sse: value };
  }
  return best;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
