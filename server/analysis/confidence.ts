import type { LatencySummary } from './robust.js';

/**
 * How sure we are, as a number in 0..1. Each factor is 1 when its evidence
 * is perfect and falls towards 0 as it weakens; the product is reported.
 */

export interface ChangePointEvidence {
  /** K-S p-value of "below" against "above" the change point. */
  pValue: number;
  /** How much more the sizes above the step miss than any size below it (0..1): 1 for a full, clean step. */
  separation: number;
  /** Share of sweep points on the expected side of the step (0..1). */
  consistency: number;
  /** Width of the bracket the size lies in, relative to the size. */
  relativeResolution: number;
  /** The step sits at the first or last point: the true change may lie outside. */
  atEdge: boolean;
}

/** Resolution at which the confidence has dropped to 1/e. */
const RESOLUTION_SCALE = 0.1;

export function changePointConfidence(evidence: ChangePointEvidence): number {
  const significance = 1 - evidence.pValue;
  const separation = 0.5 + 0.5 * clamp01(evidence.separation);
  const resolution = Math.exp(-Math.max(0, evidence.relativeResolution) / RESOLUTION_SCALE);
  const edge = evidence.atEdge ? 0.5 : 1;
  return round3(clamp01(significance * separation * clamp01(evidence.consistency) * resolution * edge));
}

/** Latency confidence: the share of samples kept, times how tight the mean's standard error is. */
export function latencyConfidence(summary: LatencySummary): number {
  const total = summary.sampleCount + summary.droppedCount;
  if (summary.sampleCount < 2 || total === 0 || summary.mean <= 0) return 0;
  const kept = summary.sampleCount / total;
  const relativeStandardError = summary.stdev / (summary.mean * Math.sqrt(summary.sampleCount));
  return round3(clamp01(kept / (1 + 20 * relativeStandardError)));
}

/** Combines independent confidences (all must hold). */
export function combineConfidences(...confidences: number[]): number {
  return round3(confidences.reduce((product, value) => product * clamp01(value), 1));
}

function clamp01(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
