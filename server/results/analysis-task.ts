import { performance } from 'node:perf_hooks';
import { threadId } from 'node:worker_threads';
import type { Discovery, Measurement } from '../discovery/contract.js';
import type { DiscoveryOutcome, ResultDocument } from '../model/document.js';
import { decodeRawSeries, encodeRawSeries, type EncodedRawSeries } from '../store/raw-codec.js';
import { buildResultDocument, type ResultMeta } from './result-document.js';

/** One result to build: everything the analysis needs, and nothing that lives only on the event loop's side. */
export interface AnalysisTask {
  /** A probe's fresh measurement; null when a stored result is re-analysed. */
  measurement: Measurement | null;
  /**
   * Stored raw series as they are in SQLite: for a partial probe, the previous result's (carried over for the
   * strategies it did not re-measure); for a re-analysis, the source's own.
   */
  storedRaw: EncodedRawSeries[] | null;
  meta: ResultMeta;
  previous: ResultDocument | null;
}

/** A built result, ready for one INSERT: the document, its JSON and the series to store, all made off the event loop. */
export interface AnalysisProduct {
  document: ResultDocument;
  documentJson: string;
  /** The series to store with it, encoded; empty for a re-analysis (the source's are copied in SQL). */
  raw: EncodedRawSeries[];
  analysisMs: number;
  /** The thread that analysed (0: the main thread; a worker's own id otherwise). */
  threadId: number;
  /** Another tenant the measurement itself showed (Measurement.interference), or null: the job decides whether such a result is stored. */
  interference: string | null;
}

type Analyse = Pick<Discovery, 'reanalyse' | 'carryOverRaw'>;

/**
 * The one analysis of a result (DESIGN.md: results/ owns a result's life): a probe's series, with a partial
 * probe's carried over from the previous result, or a stored result's series for a re-analysis, analysed once
 * into the document that is stored.
 */
export function analyseTask(task: AnalysisTask, discovery: Analyse): AnalysisProduct {
  const started = performance.now();
  const outcome = task.measurement
    ? probeOutcome(task.measurement, task, discovery)
    : discovery.reanalyse((task.storedRaw ?? []).map(decodeRawSeries));
  const documentJson = JSON.stringify(buildResultDocument(outcome, task.meta, task.previous));
  return {
    // Parsed back, so the caller holds exactly what a later read of the row gives (no undefined-valued keys).
    document: JSON.parse(documentJson) as ResultDocument,
    documentJson,
    raw: task.measurement ? outcome.raw.map(encodeRawSeries) : [],
    analysisMs: performance.now() - started,
    threadId,
    interference: task.measurement?.interference ?? null,
  };
}

/**
 * A full probe is analysed from its own series. A partial (`only`) probe is analysed together with the
 * previous result's series of the other strategies, so the stored result can be rebuilt from its own raw
 * data; without a previous result it holds just the elements asked for. The measurement's warnings
 * (benchmarks skipped) come first.
 */
function probeOutcome(measurement: Measurement, task: AnalysisTask, discovery: Analyse): DiscoveryOutcome {
  const only = task.meta.only;
  if (only && task.storedRaw) {
    const whole = discovery.reanalyse(discovery.carryOverRaw(task.storedRaw.map(decodeRawSeries), measurement.raw, only));
    return { ...whole, warnings: [...new Set([...measurement.warnings, ...whole.warnings])] };
  }
  const outcome = discovery.reanalyse(measurement.raw, only);
  return { ...outcome, warnings: [...measurement.warnings, ...outcome.warnings] };
}
