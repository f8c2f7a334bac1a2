/**
 * What the rest of the daemon needs of discovery (DESIGN.md: one injection):
 * measuring on a GPU, and the pure analysis of what was measured. The jobs
 * and the result lifecycle import only what is here; the daemon injects
 * server/discovery's implementation, tests inject fakes.
 */
import type { ProbeChannel } from '../gpu/backend.js';
import type { DiscoveryOutcome, ProbeTarget, RawSeries } from '../model/document.js';
import type { DiscoveryLogger } from './probe-session.js';

/** Where a probe's progress stands while its measurements are analysed (the strategies end at 0.95). */
export const ANALYSIS_PROGRESS = 0.97;

/** What one discovery measured: its raw series, and what it could not measure and why. Nothing analysed yet. */
export interface Measurement {
  raw: RawSeries[];
  warnings: string[];
  /** Another tenant seen in the series themselves, in a family measured twice (ProbeSession.measureFamily): what was seen. */
  interference?: string;
}

export interface MeasureOptions {
  only?: ProbeTarget[] | null;
  signal?: AbortSignal;
  onProgress?: (phase: string, fraction: number) => void;
  logger?: DiscoveryLogger;
}

export interface Discovery {
  /** Bumped whenever the analysis of the same raw series may give a different document. */
  readonly version: string;
  /** Runs the benchmarks and records their raw series. */
  discover(channel: ProbeChannel, options: MeasureOptions): Promise<Measurement>;
  /** The outcome of every strategy whose series `raw` holds (only those of `only`'s elements, when given). Pure: no GPU. */
  reanalyse(raw: RawSeries[], only?: ProbeTarget[] | null): DiscoveryOutcome;
  /** A partial probe's fresh series plus the previous result's series of the strategies it did not re-measure. */
  carryOverRaw(previous: readonly RawSeries[], fresh: readonly RawSeries[], only: readonly ProbeTarget[] | null): RawSeries[];
  /**
   * Set on server/discovery's own object: its analysis then runs in worker threads that import it
   * (server/results/analysis-worker.ts), never on the event loop. Without it (tests' fakes) it runs in-process.
   */
  readonly analysedInWorkers?: boolean;
}
