import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { ERROR_CODES, jobErrorCode, type ErrorCode } from '../errors.js';
import type { MeasurementBackend } from '../gpu/backend.js';
import type { GpuIdentity } from '../model/gpu.js';
import type { Db } from '../store/database.js';
import type { JobStore, NewJob } from '../store/jobs.js';
import type { ResultStore, StoredResult } from '../store/results.js';
import type { ProbeJob } from '../model/job.js';
import type { DiscoveryOutcome, ElementName } from '../model/document.js';
import { completeOutcome, type Analysis } from './analysis.js';
import { buildResultDocument } from './result-document.js';

export type Discover = (
  channel: Awaited<ReturnType<MeasurementBackend['open']>>,
  options: { only?: ElementName[] | null; signal?: AbortSignal; onProgress?: (phase: string, fraction: number) => void; logger?: Logger },
) => Promise<DiscoveryOutcome>;

export interface SchedulerEvents {
  queued: [ProbeJob];
  started: [ProbeJob];
  progress: [ProbeJob];
  succeeded: [ProbeJob, StoredResult];
  failed: [ProbeJob];
  cancelled: [ProbeJob];
}

export interface SchedulerOptions {
  db: Db;
  jobs: JobStore;
  results: ResultStore;
  backend: MeasurementBackend;
  discover: Discover;
  analysis: Analysis;
  concurrency: number;
  logger: Logger;
  /** A whole probe may take at most this long before it is aborted. */
  jobTimeoutMs?: number;
  /** Progress is written to SQLite at most this often per job. */
  progressWriteMs?: number;
  /**
   * Takes the GPU's cross-process lock before the probe starts (server/store/lock.ts):
   * resolves with a release once held, waiting while another process measures the GPU.
   */
  lockGpu?: (gpu: GpuIdentity, signal: AbortSignal, onWait: (owner: string) => void) => Promise<{ release(): Promise<void> }>;
  /** Told of every write that failed or succeeded, so readiness reflects the store (server/store/health.ts). */
  storeHealth?: { recordWriteFailure(error: unknown): void; recordWriteSuccess(): void };
  /** Called after each stored result (retention prunes that GPU's history). */
  afterStore?: (gpuUuid: string) => void;
}

interface Pending {
  job: ProbeJob;
  gpu: GpuIdentity;
}

export class EnqueueConflict extends Error {
  constructor(readonly job: ProbeJob) {
    super(`a probe job (${job.id}) is already ${job.state} for GPU ${job.gpuUuid}`);
  }
}

const DEFAULT_JOB_TIMEOUT_MS = 30 * 60_000;

/**
 * Runs probe jobs: one per GPU at a time, up to `concurrency` GPUs in
 * parallel. A job's result, raw series and final state land in one
 * transaction; a failed job leaves the previous result untouched.
 */
export class ProbeScheduler extends EventEmitter<SchedulerEvents> {
  private readonly queue: Pending[] = [];
  private readonly running = new Map<string, { job: ProbeJob; abort: AbortController }>();
  /** Each GPU's queued or running job as last written, so readers need not ask SQLite. */
  private readonly active = new Map<string, ProbeJob>();
  private idleWaiters: Array<() => void> = [];
  private closed = false;

  constructor(private readonly options: SchedulerOptions) {
    super();
  }

  get backend(): MeasurementBackend {
    return this.options.backend;
  }

  /** The GPU's queued or running job, from memory (kept in step with every state the scheduler writes). */
  activeFor(gpuUuid: string): ProbeJob | null {
    return this.active.get(gpuUuid) ?? null;
  }

  /** Emits a job event after recording the job's latest state. */
  private publish(type: 'queued' | 'started' | 'progress' | 'failed' | 'cancelled', job: ProbeJob): void {
    this.track(job);
    this.emit(type, job);
  }

  private track(job: ProbeJob): void {
    if (job.state === 'queued' || job.state === 'running') this.active.set(job.gpuUuid, job);
    else if (this.active.get(job.gpuUuid)?.id === job.id) this.active.delete(job.gpuUuid);
  }

  /** Queues a probe; throws EnqueueConflict when the GPU already has an active job. */
  enqueue(gpu: GpuIdentity, request: Omit<NewJob, 'gpuUuid'>): ProbeJob {
    const active = this.activeFor(gpu.uuid) ?? this.options.jobs.activeFor(gpu.uuid);
    if (active) throw new EnqueueConflict(active);
    const job = this.options.jobs.create({ ...request, gpuUuid: gpu.uuid });
    this.queue.push({ job, gpu });
    this.options.logger.info({ jobId: job.id, gpu: gpu.uuid, reason: job.reason, requestedBy: job.requestedBy, only: job.only }, 'probe job queued');
    this.publish('queued', job);
    queueMicrotask(() => this.pump());
    return job;
  }

  /**
   * Cancels a queued or running job (used by `force`). The job is marked
   * cancelled at once, so a new job for the GPU can be queued right away; a
   * running probe is aborted and its GPU is free again when it has stopped.
   */
  cancel(jobId: string, why: string): boolean {
    const index = this.queue.findIndex((p) => p.job.id === jobId);
    if (index >= 0) {
      this.queue.splice(index, 1);
      this.finishCancelled(jobId, why);
      return true;
    }
    const entry = [...this.running.values()].find((r) => r.job.id === jobId);
    if (!entry || entry.abort.signal.aborted) return false;
    this.finishCancelled(jobId, why);
    entry.abort.abort(new CancelledError(why));
    return true;
  }

  isIdle(): boolean {
    return this.queue.length === 0 && this.running.size === 0;
  }

  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops taking work, cancels what is queued or running, and closes the backend. */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of [...this.queue]) this.cancel(pending.job.id, 'the daemon is shutting down');
    for (const entry of [...this.running.values()]) this.cancel(entry.job.id, 'the daemon is shutting down');
    await this.whenIdle();
    await this.options.backend.close();
  }

  private pump(): void {
    while (!this.closed && this.running.size < this.options.concurrency) {
      const index = this.queue.findIndex((p) => !this.running.has(p.gpu.uuid));
      if (index < 0) break;
      const [next] = this.queue.splice(index, 1) as [Pending];
      const abort = new AbortController();
      this.running.set(next.gpu.uuid, { job: next.job, abort });
      void this.run(next, abort).finally(() => {
        this.running.delete(next.gpu.uuid);
        this.pump();
        if (this.isIdle()) for (const resolve of this.idleWaiters.splice(0)) resolve();
      });
    }
  }

  private async run({ job, gpu }: Pending, abort: AbortController): Promise<void> {
    const { jobs, logger, backend } = this.options;
    const startedAt = new Date();
    jobs.start(job.id, startedAt.toISOString());
    this.publish('started', jobs.get(job.id) as ProbeJob);
    logger.info({ jobId: job.id, gpu: gpu.uuid, backend: backend.kind }, 'probe job started');
    const timeoutMs = this.options.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
    const timeout = setTimeout(() => abort.abort(new JobTimeoutError(timeoutMs)), timeoutMs);
    let channel: Awaited<ReturnType<MeasurementBackend['open']>> | null = null;
    let gpuLock: { release(): Promise<void> } | null = null;
    try {
      if (this.options.lockGpu) {
        gpuLock = await this.options.lockGpu(gpu, abort.signal, (owner) => {
          logger.info({ jobId: job.id, gpu: gpu.uuid, owner }, 'the GPU is being measured by another process; waiting for its lock');
          this.safeWrite(() => jobs.progress(job.id, 'waiting for the GPU lock', 0));
        });
        if (abort.signal.aborted) throw abort.signal.reason;
      }
      channel = await backend.open(gpu);
      const outcome = await this.options.discover(channel, {
        only: job.only,
        signal: abort.signal,
        onProgress: this.progressReporter(job.id),
        logger: logger.child({ jobId: job.id }),
      });
      if (abort.signal.aborted) throw abort.signal.reason;
      const stored = this.store(job, gpu, outcome, startedAt);
      this.options.storeHealth?.recordWriteSuccess();
      try {
        this.options.afterStore?.(gpu.uuid);
      } catch (error) {
        logger.warn({ err: error, gpu: gpu.uuid }, 'pruning old results failed; they are kept');
      }
      logger.info({ jobId: job.id, gpu: gpu.uuid, resultId: stored.id, durationMs: stored.durationMs }, 'probe job succeeded');
      const succeeded = jobs.get(job.id) as ProbeJob;
      this.track(succeeded);
      this.emit('succeeded', succeeded, stored);
    } catch (error) {
      const cause = abort.signal.aborted ? abort.signal.reason : error;
      if (cause instanceof CancelledError) {
        logger.info({ jobId: job.id, gpu: gpu.uuid }, 'cancelled probe stopped');
      } else {
        const storeFailed = isStoreWriteError(cause);
        const code = storeFailed ? ERROR_CODES.STORE_WRITE : errorCode(cause);
        const message = (storeFailed ? 'the result could not be stored: ' : '') + (cause instanceof Error ? cause.message : String(cause));
        const error = { code, message };
        // With the disk full or the file read-only, even this write may fail: the job's end is then known from memory.
        const written = this.safeWrite(() => {
          jobs.finish(job.id, { state: 'failed', error });
          return jobs.get(job.id);
        });
        logger.warn({ jobId: job.id, gpu: gpu.uuid, code, err: cause }, 'probe job failed; the previous result stays served');
        this.publish('failed', written ?? { ...job, state: 'failed', error, finishedAt: new Date().toISOString() });
      }
    } finally {
      clearTimeout(timeout);
      await channel?.close().catch((error: unknown) => logger.warn({ err: error }, 'closing the probe channel failed'));
      await gpuLock?.release().catch((error: unknown) => logger.warn({ err: error }, 'releasing the GPU lock failed'));
    }
  }

  /** Runs a store write; a failure is logged and reported to readiness instead of escaping (no unhandled rejection). */
  private safeWrite<T>(write: () => T): T | null {
    try {
      return write();
    } catch (error) {
      this.options.storeHealth?.recordWriteFailure(error);
      this.options.logger.error({ err: error }, 'a database write failed; readiness reports the store degraded');
      return null;
    }
  }

  private store(job: ProbeJob, gpu: GpuIdentity, fresh: DiscoveryOutcome, startedAt: Date): StoredResult {
    const { db, jobs, results, backend, analysis } = this.options;
    const analysisVersion = analysis.version;
    const key = { gpuUuid: gpu.uuid, driverVersion: gpu.driverVersion, probeVersion: backend.probeVersion };
    const previous = results.latestFor(key);
    const outcome = completeOutcome(analysis, fresh, job.only, job.only && previous ? results.rawSeries(previous.id) : null);
    const finishedAt = new Date();
    const document = buildResultDocument(
      outcome,
      { gpu, simulated: backend.simulated, probeVersion: backend.probeVersion, analysisVersion, jobId: job.id, only: job.only, startedAt, finishedAt },
      previous?.document ?? null,
    );
    let resultId: number;
    try {
      resultId = db.transaction(() => {
        const id = results.insert({
          ...key,
          analysisVersion,
          configuration: { backend: backend.kind, only: job.only, force: job.force, reason: job.reason },
          createdAt: finishedAt.toISOString(),
          durationMs: document.probe.durationMs,
          simulated: backend.simulated,
          jobId: job.id,
          document,
          raw: outcome.raw,
        });
        jobs.finish(job.id, { state: 'succeeded', resultId: id }, finishedAt.toISOString());
        return id;
      })();
    } catch (error) {
      this.options.storeHealth?.recordWriteFailure(error);
      throw error;
    }
    return results.get(resultId) as StoredResult;
  }

  private progressReporter(jobId: string): (phase: string, fraction: number) => void {
    const interval = this.options.progressWriteMs ?? 250;
    let lastWrite = 0;
    return (phase, fraction) => {
      const now = Date.now();
      if (now - lastWrite < interval && fraction < 1) return;
      lastWrite = now;
      this.options.jobs.progress(jobId, phase, fraction);
      this.publish('progress', this.options.jobs.get(jobId) as ProbeJob);
    };
  }

  private finishCancelled(jobId: string, why: string): void {
    this.options.jobs.finish(jobId, { state: 'cancelled', error: { code: CANCELLED_CODE, message: why } });
    this.options.logger.info({ jobId, why }, 'probe job cancelled');
    this.publish('cancelled', this.options.jobs.get(jobId) as ProbeJob);
  }
}

const CANCELLED_CODE = ERROR_CODES.PROBE_CANCELLED;

export class CancelledError extends Error {
  readonly code = CANCELLED_CODE;
}

/**
 * The whole job ran past `jobTimeoutMs`. Its own code: one probe request
 * overrunning (TOPOD_ERR_PROBE_REQUEST_TIMEOUT, from the channel) is another
 * failure with another fix.
 */
export class JobTimeoutError extends Error {
  readonly code = ERROR_CODES.JOB_TIMEOUT;
  constructor(limitMs: number) {
    super(`the probe job did not finish within ${limitMs} ms`);
  }
}

/** SQLite could not write (disk full, read-only, I/O error, the file gone): the store's fault, not the probe's. */
export function isStoreWriteError(error: unknown): boolean {
  const code = error !== null && typeof error === 'object' && 'code' in error ? String(error.code) : '';
  return /^SQLITE_(FULL|READONLY|IOERR|CANTOPEN|CORRUPT|NOTADB|PERM)/.test(code);
}

/** The code a failed job records (server/errors.ts maps probe protocol codes). */
function errorCode(error: unknown): ErrorCode {
  return jobErrorCode(error);
}
