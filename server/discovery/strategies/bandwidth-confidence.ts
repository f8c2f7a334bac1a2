import { mean, median, repetitionConfidence, stdev, type BandwidthPoint } from '../../analysis/index.js';

/**
 * How sure a searched bandwidth is (issue 17 item 3). The search reports the
 * fastest of many geometries, and two things move that best away from the
 * level's rate beyond its own launches' spread:
 *
 * - **Launch overhead.** A launch takes overhead + bytes / rate, so a
 *   geometry whose passes leave the overhead a share d of its time runs d
 *   under the level. The overhead is fitted over every geometry that was
 *   measured at several passes (one intercept, one slope per shape, weighted
 *   by relative error), so the best's shortfall is known even when the best
 *   itself has no passes axis.
 * - **Selection (winner's curse).** The maximum of noisy rates is biased up.
 *   When the best leads every other geometry by a wide margin, its rate rests
 *   on its own three launches alone; the lead bounds how much luck lifted it.
 *
 * Either share, as a fraction of the rate, lowers the confidence twice as
 * much: a rate that may be 5 % off carries at most 0.9, the threshold under
 * which a wrong value must stay (bench/calibration.ts).
 */

/** A measured geometry with its launch times. */
export interface TimedBandwidthPoint extends BandwidthPoint {
  secondsPerRepetition: readonly number[];
}

/** Confidence lost per unit of relative error: 5 % off → 0.9. */
const CONFIDENCE_PER_ERROR = 2;

export interface BandwidthConfidence {
  confidence: number;
  /** The launch overhead's share of the best geometry's launch time (0 when it cannot be fitted). */
  overheadShare: number;
  /** The best rate over the median of the next few geometries', less 1 (0 with one geometry). */
  leadOverNext: number;
}

const shapeOf = (point: TimedBandwidthPoint) => `${point.blocks}/${point.threadsPerBlock}`;

/**
 * The launch overhead in seconds: least squares of each geometry's median
 * launch time against passes, sharing the intercept across shapes, each
 * shape with its own slope, weighted by 1/time² (launch noise is relative).
 * A shape measured at one passes count says nothing of the intercept.
 * Null when no shape has two passes counts; never below 0.
 */
export function launchOverheadSeconds(points: readonly TimedBandwidthPoint[]): number | null {
  const byShape = new Map<string, Array<{ passes: number; seconds: number; weight: number }>>();
  for (const point of points) {
    const seconds = median(point.secondsPerRepetition);
    const shape = byShape.get(shapeOf(point)) ?? [];
    shape.push({ passes: point.passes, seconds, weight: 1 / (seconds * seconds) });
    byShape.set(shapeOf(point), shape);
  }
  // With each shape's slope profiled out, the intercept's normal equation is Σ w·x·y / Σ w·x².
  let xy = 0;
  let xx = 0;
  let weights = 0;
  for (const shape of byShape.values()) {
    const wpp = shape.reduce((sum, d) => sum + d.weight * d.passes * d.passes, 0);
    const slopeOfTime = shape.reduce((sum, d) => sum + d.weight * d.passes * d.seconds, 0) / wpp;
    const slopeOfIntercept = shape.reduce((sum, d) => sum + d.weight * d.passes, 0) / wpp;
    for (const d of shape) {
      const x = 1 - d.passes * slopeOfIntercept;
      xy += d.weight * x * (d.seconds - d.passes * slopeOfTime);
      xx += d.weight * x * x;
      weights += d.weight;
    }
  }
  // A shape with one point leaves x at rounding noise: no shape with two is no fit.
  if (!(xx > 1e-9 * weights)) return null;
  return Math.max(0, xy / xx);
}

/** Geometries after the best whose median rate stands for the plateau the best was picked from. */
const PLATEAU_GEOMETRIES = 3;

/**
 * The relative noise of one geometry's rate: the median over geometries of
 * their launch times' relative stdev, over √repetitions (the median, so a
 * geometry with one slow first launch does not speak for all).
 */
export function rateNoise(points: readonly TimedBandwidthPoint[]): number {
  const spreads = points
    .filter((point) => point.secondsPerRepetition.length > 1)
    .map((point) => stdev(point.secondsPerRepetition) / mean(point.secondsPerRepetition) / Math.sqrt(point.secondsPerRepetition.length));
  return spreads.length > 0 ? median(spreads) : 0;
}

/** The best's lead over the median rate of the next PLATEAU_GEOMETRIES geometries, less 1 (0 with one geometry). */
export function leadOverPlateau(points: readonly TimedBandwidthPoint[], best: TimedBandwidthPoint): number {
  const next = points
    .filter((point) => point !== best)
    .map((point) => point.bytesPerSecond)
    .sort((a, b) => b - a)
    .slice(0, PLATEAU_GEOMETRIES);
  return next.length > 0 ? Math.max(0, best.bytesPerSecond / median(next) - 1) : 0;
}

/** The confidence of `best` among `points` (best included): its repetitions' spread, its launch overhead's share, its lead. */
export function bandwidthConfidence(points: readonly TimedBandwidthPoint[], best: TimedBandwidthPoint): BandwidthConfidence {
  const overheadSeconds = launchOverheadSeconds(points);
  const overheadShare = overheadSeconds === null ? 0 : Math.min(1, overheadSeconds / median(best.secondsPerRepetition));
  const leadOverNext = leadOverPlateau(points, best);
  const selectionShare = leadOverNext > 0 ? leadOverNext + rateNoise(points) : 0;
  const fromError = 1 - CONFIDENCE_PER_ERROR * Math.max(overheadShare, selectionShare);
  const confidence = Math.max(0, Math.min(repetitionConfidence(best.secondsPerRepetition), fromError));
  return { confidence, overheadShare, leadOverNext };
}
