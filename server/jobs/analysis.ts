import type { DiscoveryOutcome, ElementName, RawSeries } from '../model/document.js';

/**
 * What the jobs need of the analysis (server/discovery): its version, and how
 * to build an outcome from raw series alone. Injected, so the scheduler and the
 * re-analyser never import discovery and tests can give them a fake.
 */
export interface Analysis {
  readonly version: string;
  /** The outcome of every strategy whose series `raw` holds. Pure: no GPU. */
  reanalyse(raw: RawSeries[]): DiscoveryOutcome;
  /** A partial probe's fresh series plus the previous result's series of the strategies it did not re-measure. */
  carryOverRaw(previous: readonly RawSeries[], fresh: readonly RawSeries[], only: readonly ElementName[] | null): RawSeries[];
}

/**
 * The outcome to store for a probe. A partial (`only`) probe is analysed
 * together with the previous result's series of the other strategies, so the
 * stored result can be rebuilt from its own raw data; its measurement
 * warnings (skipped benchmarks) are kept.
 */
export function completeOutcome(analysis: Analysis, fresh: DiscoveryOutcome, only: readonly ElementName[] | null, previousRaw: readonly RawSeries[] | null): DiscoveryOutcome {
  if (!only || !previousRaw) return fresh;
  const whole = analysis.reanalyse(analysis.carryOverRaw(previousRaw, fresh.raw, only));
  return { ...whole, warnings: [...new Set([...fresh.warnings, ...whole.warnings])] };
}
