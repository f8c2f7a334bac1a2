/**
 * Fetch granularity from cold pointer chases at growing strides (MT4G §IV-D):
 * a cold walk misses on the first load into every fetched unit and hits on
 * the loads after it inside the same unit, so at stride s the share of hits
 * is 1 − s/g for s < g and 0 from s = g on. The granularity is the power of
 * two whose curve fits the observed hit shares best; MT4G stops at the first
 * stride without hits, which one disturbed sample can move — the fit uses
 * every stride.
 */

export interface StridePoint {
  strideBytes: number;
  samples: readonly number[];
}

export interface GranularityFound {
  found: true;
  granularityBytes: number;
  /** Observed share of loads at or below the hit threshold, per stride (input order). */
  hitShares: number[];
  /** Root-mean-square distance between the observed shares and the chosen curve. */
  rmsError: number;
  confidence: number;
}

export interface GranularityMissing {
  found: false;
  reason: string;
  hitShares: number[];
}

export type GranularityResult = GranularityFound | GranularityMissing;

/** Candidate granularities: powers of two from 8 B to 4 KiB. */
const CANDIDATES = Array.from({ length: 10 }, (_, i) => 8 * 2 ** i);
/** An RMS distance at which the fit's confidence has fallen to zero. */
const RMS_AT_ZERO_CONFIDENCE = 0.25;

export function expectedHitShare(strideBytes: number, granularityBytes: number): number {
  return Math.max(0, 1 - strideBytes / granularityBytes);
}

export function hitShare(samples: readonly number[], thresholdCycles: number): number {
  if (samples.length === 0) return 0;
  return samples.filter((value) => value <= thresholdCycles).length / samples.length;
}

export function fitFetchGranularity(points: readonly StridePoint[], thresholdCycles: number): GranularityResult {
  const hitShares = points.map((point) => hitShare(point.samples, thresholdCycles));
  if (points.length < 3) return { found: false, reason: 'fewer than three strides', hitShares };
  const largest = Math.max(...points.map((point) => point.strideBytes));
  if (Math.max(...hitShares) < 0.2)
    return { found: false, reason: 'no stride shows hits: every load missed, or the threshold is below the hit latency', hitShares };
  if (hitShares[indexOfMax(points.map((p) => p.strideBytes))]! > 0.2) {
    return {
      found: false,
      reason: `loads still hit at the largest stride (${largest} B): the granularity is larger, or the walk was not cold`,
      hitShares,
    };
  }
  const fits = CANDIDATES.filter((g) => g <= 2 * largest).map((granularityBytes) => {
    const squared = points.reduce((sum, point, i) => sum + (hitShares[i]! - expectedHitShare(point.strideBytes, granularityBytes)) ** 2, 0);
    return { granularityBytes, rms: Math.sqrt(squared / points.length) };
  });
  fits.sort((a, b) => a.rms - b.rms || a.granularityBytes - b.granularityBytes);
  const [best, second] = fits;
  if (!best) return { found: false, reason: 'no candidate granularity', hitShares };
  const fit = Math.max(0, 1 - best.rms / RMS_AT_ZERO_CONFIDENCE);
  // How much better the chosen curve explains the shares than the next best: a near tie is a weak answer.
  const margin = second ? Math.min(1, (second.rms - best.rms) / Math.max(0.05, second.rms)) : 1;
  return {
    found: true,
    granularityBytes: best.granularityBytes,
    hitShares,
    rmsError: round3(best.rms),
    confidence: round3(fit * (0.5 + 0.5 * margin)),
  };
}

function indexOfMax(values: readonly number[]): number {
  let best = 0;
  values.forEach((value, i) => {
    if (value > values[best]!) best = i;
  });
  return best;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
