import type { Logger } from 'pino';
import type { Measurement } from '../discovery/contract.js';
import { DOCUMENT_SCHEMA_VERSION } from '../model/document.js';
import type { GpuIdentity } from '../model/gpu.js';
import type { ProbeJob } from '../model/job.js';
import type { ProbeConditions } from '../model/conditions-schema.js';
import type { Db } from '../store/database.js';
import type { JobStore } from '../store/jobs.js';
import type { NewResult, ResultStore, StoredResult } from '../store/results.js';
import { inProcessResultWriter, type JobSuccess, type ResultWriter, type WrittenResult } from '../store/result-writer.js';
import type { AnalysisExecutor } from './analysis-executor.js';
import type { EncodedRawSeries } from '../store/raw-codec.js';
import type { AnalysisProduct, AnalysisTask } from './analysis-task.js';

/** What measured a probe's series: it goes into the result's key and document. */
export interface MeasuredBy {
  kind: string;
  simulated: boolean;
  probeVersion: string;
}

export interface ProbeOutcome {
  gpu: GpuIdentity;
  measurement: Measurement;
  measuredBy: MeasuredBy;
  startedAt: Date;
  finishedAt: Date;
  /** What NVML saw before and during the probe; absent when nothing looked. */
  conditions?: ProbeConditions;
  /** Aborts the analysis (a cancelled or timed-out job): nothing is stored. */
  signal?: AbortSignal;
}

/** A probe's result before it is measured: what it will be built from and stored as. */
export interface PreparedResult {
  job: ProbeJob;
  gpu: GpuIdentity;
  key: { gpuUuid: string; driverVersion: string; probeVersion: string };
  measuredBy: MeasuredBy;
  startedAt: Date;
  previous: StoredResult | null;
  storedRaw: EncodedRawSeries[] | null;
}

/** A result as this lifecycle stores it: its document also as the JSON the analysis made (what is written). */
type RowToStore = NewResult & { documentJson: string };

export interface ResultLifecycleOptions {
  db: Db;
  results: ResultStore;
  jobs: JobStore;
  analysis: AnalysisExecutor;
  /** Where results are written (default: in this thread, on `db`); the daemon's file database has a writer thread. */
  writer?: ResultWriter;
  /** The analysis version every result built here says it was built by. */
  analysisVersion: string;
  logger: Logger;
  /** Told of every write that failed or succeeded, so readiness reflects the store (server/store/health.ts). */
  storeHealth?: { recordWriteFailure(error: unknown): void; recordWriteSuccess(): void };
  /** Called after each stored result (retention prunes that GPU's history). */
  afterStore?: (gpuUuid: string) => void;
}

/**
 * A result's whole life, one owner (DESIGN.md results/): a probe's outcome is
 * analysed once, off the event loop, and stored with its job's end in one
 * transaction; a stored result is re-analysed from its own raw series. Each
 * returns the result it stored, as a later read would give it.
 */
export class ResultLifecycle {
  private readonly writer: ResultWriter;

  constructor(private readonly options: ResultLifecycleOptions) {
    this.writer = options.writer ?? inProcessResultWriter(options.db, options.results, options.jobs);
  }

  get analysisVersion(): string {
    return this.options.analysisVersion;
  }

  /** Built by another analysis, or stored in an older document schema (rebuilding writes the current one). */
  isOutdated(result: StoredResult): boolean {
    return result.analysisVersion !== this.options.analysisVersion || result.document.schemaVersion !== DOCUMENT_SCHEMA_VERSION;
  }

  /** Analyses a probe's outcome and stores it with the job's success; returns both as stored. */
  async record(job: ProbeJob, outcome: ProbeOutcome): Promise<{ result: StoredResult; job: ProbeJob }> {
    const prepared = this.prepare(job, outcome.gpu, outcome.measuredBy, outcome.startedAt);
    const product = await this.analyse(
      { ...this.analysisTask(prepared, outcome.finishedAt, outcome.conditions), measurement: outcome.measurement },
      outcome.signal,
    );
    outcome.signal?.throwIfAborted();
    return await this.store(prepared, product);
  }

  /**
   * What a probe's result will be built from, read before it measures: the previous result for its key, and,
   * for a partial probe, that result's stored series (loaded once, as stored: the analysis carries them over).
   */
  prepare(job: ProbeJob, gpu: GpuIdentity, measuredBy: MeasuredBy, startedAt: Date): PreparedResult {
    const key = { gpuUuid: gpu.uuid, driverVersion: gpu.driverVersion, probeVersion: measuredBy.probeVersion };
    const previous = this.options.results.latestFor(key);
    return {
      job,
      gpu,
      key,
      measuredBy,
      startedAt,
      previous,
      storedRaw: job.only && previous ? this.options.results.encodedRawSeries(previous.id) : null,
    };
  }

  /** The analysis of a prepared result, once its measurement has ended (the measurement itself is added by whoever holds it). */
  analysisTask(prepared: PreparedResult, finishedAt: Date, conditions?: ProbeConditions): Omit<AnalysisTask, 'measurement'> {
    const { job, gpu, measuredBy, startedAt, previous } = prepared;
    return {
      storedRaw: prepared.storedRaw,
      meta: {
        gpu,
        simulated: measuredBy.simulated,
        probeVersion: measuredBy.probeVersion,
        analysisVersion: this.options.analysisVersion,
        jobId: job.id,
        only: job.only,
        startedAt,
        finishedAt,
        ...(conditions ? { conditions } : {}),
      },
      previous: previous?.document ?? null,
    };
  }

  /** Analyses off the event loop (the lifecycle's executor). */
  analyse(task: AnalysisTask, signal?: AbortSignal): Promise<AnalysisProduct> {
    return this.options.analysis.run(task, signal);
  }

  /** Stores an analysed probe with its job's success in one transaction; returns both as a read would give them. */
  async store(prepared: PreparedResult, product: AnalysisProduct): Promise<{ result: StoredResult; job: ProbeJob }> {
    const { analysisVersion } = this.options;
    const { job, key, measuredBy } = prepared;
    const row: RowToStore = {
      ...key,
      analysisVersion,
      configuration: { backend: measuredBy.kind, only: job.only, force: job.force, reason: job.reason },
      createdAt: product.document.probe.finishedAt,
      durationMs: product.document.probe.durationMs,
      simulated: measuredBy.simulated,
      jobId: job.id,
      document: product.document,
      documentJson: product.documentJson,
      raw: product.raw,
    };
    const { resultId: id, job: finished } = await this.write(row, { jobId: job.id, finishedAt: row.createdAt });
    this.options.logger.debug(
      { jobId: job.id, resultId: id, analysisMs: Math.round(product.analysisMs), analysisThread: product.threadId },
      'probe result analysed and stored',
    );
    this.afterStore(prepared.gpu.uuid);
    return {
      result: storedResult(id, row, product),
      job: finished ?? { ...job, state: 'succeeded', resultId: id, progress: 1, finishedAt: row.createdAt },
    };
  }

  /**
   * Rebuilds a stored result from its own raw series with the current analysis
   * (DESIGN.md: a better analysis re-evaluates old probes without the GPU). The
   * rebuilt result is a new row for the same key that says `reanalysedFrom`;
   * the source stays in the history.
   */
  async reanalyse(source: StoredResult): Promise<StoredResult> {
    const { results, analysis, analysisVersion, logger } = this.options;
    const old = source.document;
    const product = await analysis.run({
      measurement: null,
      storedRaw: results.encodedRawSeries(source.id),
      meta: {
        gpu: { ...old.gpu, index: 0, driverVersion: source.driverVersion },
        simulated: source.simulated,
        probeVersion: source.probeVersion,
        analysisVersion,
        jobId: old.probe.jobId,
        only: old.probe.only,
        startedAt: new Date(old.probe.startedAt),
        finishedAt: new Date(old.probe.finishedAt),
        reanalysedFrom: { resultId: source.id, analysisVersion: source.analysisVersion },
      },
      previous: old,
    });
    const row: RowToStore & { reanalysedFrom: number } = {
      gpuUuid: source.gpuUuid,
      driverVersion: source.driverVersion,
      probeVersion: source.probeVersion,
      analysisVersion,
      configuration: { ...source.configuration, reanalysedFrom: source.id },
      createdAt: new Date().toISOString(),
      durationMs: source.durationMs,
      simulated: source.simulated,
      jobId: source.jobId,
      document: product.document,
      documentJson: product.documentJson,
      raw: [],
      reanalysedFrom: source.id,
    };
    const { resultId: id } = await this.write(row, null);
    logger.info(
      {
        gpu: source.gpuUuid,
        from: source.id,
        fromAnalysis: source.analysisVersion,
        resultId: id,
        analysis: analysisVersion,
        analysisMs: Math.round(product.analysisMs),
      },
      'result re-analysed from its stored raw series',
    );
    return storedResult(id, row, product);
  }

  /** The row as written (its document as the JSON the analysis made, not the object), through the writer. */
  private async write(row: RowToStore, success: JobSuccess | null): Promise<WrittenResult> {
    const { document: _document, ...writable } = row;
    try {
      const written = await this.writer.write(writable, success);
      this.options.storeHealth?.recordWriteSuccess();
      return written;
    } catch (error) {
      this.options.storeHealth?.recordWriteFailure(error);
      throw error;
    }
  }

  private afterStore(gpuUuid: string): void {
    try {
      this.options.afterStore?.(gpuUuid);
    } catch (error) {
      this.options.logger.warn({ err: error, gpu: gpuUuid }, 'pruning old results failed; they are kept');
    }
  }
}

/** The stored row as a read would return it, without reading it back. */
function storedResult(id: number, row: NewResult, product: AnalysisProduct): StoredResult {
  const document = product.document;
  document.probe.resultId = id;
  return {
    id,
    gpuUuid: row.gpuUuid,
    driverVersion: row.driverVersion,
    probeVersion: row.probeVersion,
    analysisVersion: row.analysisVersion,
    configuration: JSON.parse(JSON.stringify(row.configuration)) as Record<string, unknown>,
    createdAt: row.createdAt,
    durationMs: row.durationMs,
    simulated: row.simulated,
    jobId: row.jobId,
    reanalysedFrom: row.reanalysedFrom ?? null,
    document,
  };
}
