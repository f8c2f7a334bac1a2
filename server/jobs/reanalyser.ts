import type { Logger } from 'pino';
import { DOCUMENT_SCHEMA_VERSION } from '../model/document.js';
import type { Db } from '../store/database.js';
import type { ResultStore, StoredResult } from '../store/results.js';
import type { Analysis } from './analysis.js';
import { buildResultDocument } from './result-document.js';

/**
 * Rebuilds a stored result from its own raw series with the current analysis
 * (DESIGN.md: a better analysis re-evaluates old probes without the GPU). The
 * rebuilt result is a new row for the same key that says `reanalysedFrom`; the
 * source stays in the history.
 */
export class ResultReanalyser {
  constructor(
    private readonly options: { db: Db; results: ResultStore; analysis: Analysis; logger: Logger },
  ) {}

  /** Built by another analysis, or stored in an older document schema (rebuilding writes the current one). */
  isOutdated(result: StoredResult): boolean {
    return result.analysisVersion !== this.options.analysis.version || result.document.schemaVersion !== DOCUMENT_SCHEMA_VERSION;
  }

  rebuild(source: StoredResult): StoredResult {
    const { db, results, analysis, logger } = this.options;
    const old = source.document;
    const outcome = analysis.reanalyse(results.rawSeries(source.id));
    const document = buildResultDocument(
      outcome,
      {
        gpu: { ...old.gpu, index: 0, driverVersion: source.driverVersion },
        simulated: source.simulated,
        probeVersion: source.probeVersion,
        analysisVersion: analysis.version,
        jobId: old.probe.jobId,
        only: old.probe.only,
        startedAt: new Date(old.probe.startedAt),
        finishedAt: new Date(old.probe.finishedAt),
        reanalysedFrom: { resultId: source.id, analysisVersion: source.analysisVersion },
      },
      old,
    );
    const id = db.transaction(() =>
      results.insert({
        gpuUuid: source.gpuUuid,
        driverVersion: source.driverVersion,
        probeVersion: source.probeVersion,
        analysisVersion: analysis.version,
        configuration: { ...source.configuration, reanalysedFrom: source.id },
        createdAt: new Date().toISOString(),
        durationMs: source.durationMs,
        simulated: source.simulated,
        jobId: source.jobId,
        document,
        raw: [],
        reanalysedFrom: source.id,
      }),
    )();
    logger.info({ gpu: source.gpuUuid, from: source.id, fromAnalysis: source.analysisVersion, resultId: id, analysis: analysis.version }, 'result re-analysed from its stored raw series');
    return results.get(id) as StoredResult;
  }
}
