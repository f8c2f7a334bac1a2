import { EventEmitter } from 'node:events';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ERROR_CODES, jobErrorCode, type ErrorCode } from '../errors.js';
import { ANALYSIS_PROGRESS, type Discovery } from '../discovery/contract.js';
import type { MeasurementBackend } from '../gpu/backend.js';
import type { GpuIdentity } from '../model/gpu.js';
import type { JobStore, NewJob } from '../store/jobs.js';
import type { StoredResult } from '../store/results.js';
import type { ProbeJob } from '../model/job.js';
import type { ResultLifecycle } from '../results/lifecycle.js';
import { inProcessProbeRunner, type ProbeRunner } from './probe-runner.js';
import { ProbeWatch, conditionsFrom, lookAtGpu, retryDelayMs, type GpuWatchOptions, type Look } from './gpu-watch.js';

export type Discover = Discovery['discover'];

export interface SchedulerEvents {
  queued: [ProbeJob];
  waiting: [ProbeJob];
  started: [ProbeJob];
  progress: [ProbeJob];
  succeeded: [ProbeJob, StoredResult];
  failed: [ProbeJob];
  cancelled: [ProbeJob];
}

export interface SchedulerOptions {
  jobs: JobStore;
  backend: MeasurementBackend;
  /** Measures and analyses each probe (the daemon's: a worker thread per probe); absent: `discover` in-process. */
  runner?: ProbeRunner;
  /** With no runner: measures on the event loop through `backend` (tests' fakes). */
  discover?: Discover;
  /** Analyses and stores what a probe measured (server/results). */
  lifecycle: ResultLifecycle;
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
  /** Told of every write that failed, so readiness reflects the store (server/store/health.ts). */
  storeHealth?: { recordWriteFailure(error: unknown): void };
  /** Looks at the GPU (NVML) before and during each probe; absent: never looks (no NVML to ask). */
  watch?: GpuWatchOptions;
}

interface Pending {
  job: ProbeJob;
  gpu: GpuIdentity;
  /** How often the job found its GPU busy (its next look waits twice as long). */
  busyLooks: number;
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
  private readonly running = new Map<string, { job: ProbeJob; abort: AbortController; stored?: true }>();
  /** Each GPU's queued or running job as last written, so readers need not ask SQLite. */
  private readonly active = new Map<string, ProbeJob>();
  /** Jobs waiting for their busy GPU: they hold no slot, and come back to the queue when their timer fires. */
  private readonly parked = new Map<string, { pending: Pending; timer: NodeJS.Timeout }>();
  private idleWaiters: Array<() => void> = [];
  private closed = false;

  private readonly runner: ProbeRunner;

  constructor(private readonly options: SchedulerOptions) {
    super();
    if (!options.runner && !options.discover) throw new Error('ProbeScheduler needs a runner or a discover');
    this.runner =
      options.runner ??
      inProcessProbeRunner(options.backend, options.discover as Discover, (task, signal) => options.lifecycle.analyse(task, signal));
  }

  get backend(): MeasurementBackend {
    return this.options.backend;
  }

  /** The GPU's queued or running job, from memory (kept in step with every state the scheduler writes). */
  activeFor(gpuUuid: string): ProbeJob | null {
    return this.active.get(gpuUuid) ?? null;
  }

  /**
   * A stored job as the scheduler has told it: a job whose result is being written (or was, this turn) still reads
   * as running until its success is told, as the topology does; any other job as stored.
   */
  asTold(job: ProbeJob): ProbeJob {
    const active = this.active.get(job.gpuUuid);
    return active?.id === job.id ? active : job;
  }

  /** Emits a job event after recording the job's latest state. */
  private publish(type: 'queued' | 'waiting' | 'started' | 'progress' | 'failed' | 'cancelled', job: ProbeJob): void {
    this.track(job);
    this.emit(type, job);
  }

  private track(job: ProbeJob): void {
    if (job.state === 'queued' || job.state === 'waiting' || job.state === 'running') this.active.set(job.gpuUuid, job);
    else if (this.active.get(job.gpuUuid)?.id === job.id) this.active.delete(job.gpuUuid);
  }

  /** Queues a probe; throws EnqueueConflict when the GPU already has an active job. */
  enqueue(gpu: GpuIdentity, request: Omit<NewJob, 'gpuUuid'>): ProbeJob {
    const active = this.activeFor(gpu.uuid) ?? this.options.jobs.activeFor(gpu.uuid);
    if (active) throw new EnqueueConflict(active);
    const job = this.options.jobs.create({ ...request, gpuUuid: gpu.uuid });
    this.queue.push({ job, gpu, busyLooks: 0 });
    this.options.logger.info(
      { jobId: job.id, gpu: gpu.uuid, reason: job.reason, requestedBy: job.requestedBy, only: job.only },
      'probe job queued',
    );
    this.publish('queued', job);
    // A turn of its own: starting a probe (NVML looks, the lock, the worker's task) is not added to the enqueuer's.
    setImmediate(() => this.pump());
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
    const parked = this.parked.get(jobId);
    if (parked) {
      clearTimeout(parked.timer);
      this.parked.delete(jobId);
      this.finishCancelled(jobId, why);
      this.settleIfIdle();
      return true;
    }
    const entry = [...this.running.values()].find((r) => r.job.id === jobId);
    // A result being stored (its write begun) is not undone: its job succeeds, and is told so once the write is done.
    if (!entry || entry.abort.signal.aborted || entry.stored) return false;
    this.finishCancelled(jobId, why);
    entry.abort.abort(new CancelledError(why));
    return true;
  }

  isIdle(): boolean {
    return this.queue.length === 0 && this.running.size === 0 && this.parked.size === 0;
  }

  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops taking work, cancels what is queued or running, and closes the backend. */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of [...this.queue]) this.cancel(pending.job.id, 'the daemon is shutting down');
    for (const jobId of [...this.parked.keys()]) this.cancel(jobId, 'the daemon is shutting down');
    for (const entry of [...this.running.values()]) this.cancel(entry.job.id, 'the daemon is shutting down');
    await this.whenIdle();
    await this.runner.close();
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
        this.settleIfIdle();
      });
    }
  }

  private settleIfIdle(): void {
    if (this.isIdle()) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /**
   * A busy GPU's job waits (state waiting, the reason in its phase) without
   * holding a slot, and looks again later, each time twice as late; past the
   * longest wait it fails with TOPOD_ERR_GPU_BUSY. The served result stays.
   */
  private park(pending: Pending, why: string): void {
    const watch = this.options.watch as GpuWatchOptions;
    const { logger, jobs } = this.options;
    const job = this.safeWrite(() => jobs.wait(pending.job.id, why));
    if (!job) return;
    const waitedMs = Date.now() - Date.parse(job.waitingSince ?? new Date().toISOString());
    if (waitedMs >= watch.maxWaitMs) {
      const error = {
        code: ERROR_CODES.GPU_BUSY,
        message: `the GPU stayed busy for ${Math.round(waitedMs / 1000)} s (longest wait ${Math.round(watch.maxWaitMs / 1000)} s): ${why}`,
      };
      const failed = this.safeWrite(() => jobs.finish(job.id, { state: 'failed', error }));
      logger.warn(
        { jobId: job.id, gpu: job.gpuUuid, why },
        'probe job failed: the GPU stayed busy past the longest wait; the previous result stays served',
      );
      this.publish('failed', failed ?? { ...job, state: 'failed', error });
      return;
    }
    const delayMs = Math.min(
      retryDelayMs(pending.busyLooks, watch.firstRetryMs, watch.maxRetryMs),
      Math.max(0, watch.maxWaitMs - waitedMs),
    );
    pending.busyLooks += 1;
    pending.job = job;
    logger.info({ jobId: job.id, gpu: job.gpuUuid, why, retryInMs: delayMs }, 'the GPU is in use by other processes: the probe waits');
    const timer = setTimeout(() => {
      this.parked.delete(job.id);
      if (this.closed) return;
      this.queue.push(pending);
      this.pump();
    }, delayMs);
    this.parked.set(job.id, { pending, timer });
    this.publish('waiting', job);
  }

  private async run(pending: Pending, abort: AbortController): Promise<void> {
    const { job, gpu } = pending;
    const { jobs, logger, backend, watch } = this.options;
    const first = watch ? await this.lookBeforeProbing(gpu.uuid, watch) : null;
    const allowedBusy = job.evenIfBusy || watch?.when === 'always';
    if (first?.busy && !allowedBusy) {
      this.park(pending, first.reason);
      return;
    }
    if (first?.busy)
      logger.warn({ jobId: job.id, gpu: gpu.uuid, why: first.reason }, 'measuring a GPU other processes use, as asked: the result says so');
    const startedAt = new Date();
    this.publish(
      'started',
      jobs.start(job.id, startedAt.toISOString()) ?? { ...job, state: 'running', startedAt: startedAt.toISOString() },
    );
    logger.info({ jobId: job.id, gpu: gpu.uuid, backend: backend.kind }, 'probe job started');
    const timeoutMs = this.options.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
    const timeout = setTimeout(() => abort.abort(new JobTimeoutError(timeoutMs)), timeoutMs);
    let gpuLock: { release(): Promise<void> } | null = null;
    let probeWatch: ProbeWatch | null = null;
    try {
      if (this.options.lockGpu) {
        gpuLock = await this.options.lockGpu(gpu, abort.signal, (owner) => {
          logger.info({ jobId: job.id, gpu: gpu.uuid, owner }, 'the GPU is being measured by another process; waiting for its lock');
          this.safeWrite(() => jobs.progress(job.id, 'waiting for the GPU lock', 0));
        });
        if (abort.signal.aborted) throw abort.signal.reason;
      }
      const { lifecycle } = this.options;
      const prepared = lifecycle.prepare(
        job,
        gpu,
        { kind: backend.kind, simulated: backend.simulated, probeVersion: backend.probeVersion },
        startedAt,
      );
      const onProgress = this.progressReporter(job.id);
      const product = await this.runner.run({
        jobId: job.id,
        gpu,
        only: job.only,
        signal: abort.signal,
        logger: logger.child({ jobId: job.id }),
        onProgress,
        onOpened: (pid) => {
          if (!watch || !first) return;
          // A simulated GPU runs no process on the GPU; a real probe holds one context there.
          probeWatch = new ProbeWatch(
            { ...watch, ownPids: () => [...watch.ownPids(), ...(pid ? [pid] : [])] },
            gpu.uuid,
            backend.simulated ? 0 : 1,
            (look) => {
              if (!allowedBusy) abort.abort(new InterferenceError(look.reason));
            },
            (error) => logger.warn({ err: error, gpu: gpu.uuid }, "reading the GPU's activity during the probe failed"),
          );
          probeWatch.start(first);
        },
        afterMeasuring: async () => {
          const finishedAt = new Date();
          const looks = await probeWatch?.stop();
          probeWatch = null;
          if (abort.signal.aborted) throw abort.signal.reason;
          onProgress('analysis', ANALYSIS_PROGRESS);
          return lifecycle.analysisTask(prepared, finishedAt, looks ? conditionsFrom(looks, allowedBusy) : undefined);
        },
      });
      if (abort.signal.aborted) throw abort.signal.reason;
      // A tenant the series themselves showed, twice (server/discovery/probe-session.ts), as one NVML saw.
      if (product.interference && !allowedBusy) throw new InterferenceError(`seen in the measurements: ${product.interference}`);
      // The product (its series and document) was deserialised in this turn of the loop, from the worker's message:
      // storing it in the next turn lets the answers that arrived meanwhile go first, not after both (issue 17.5).
      await nextTurn();
      if (abort.signal.aborted) throw abort.signal.reason;
      // From here the result will be stored: a cancel cannot undo it (the job is told to have succeeded below).
      const entry = this.running.get(gpu.uuid);
      if (entry) entry.stored = true;
      const { result, job: succeeded } = await lifecycle.store(prepared, product);
      logger.info({ jobId: job.id, gpu: gpu.uuid, resultId: result.id, durationMs: result.durationMs }, 'probe job succeeded');
      // Telling (the topology rebuilt, the event sent) takes a turn of its own, apart from a write in this thread.
      // Until then memory still says running; the job's own reads say so too (TopologyService.getJob).
      await nextTurn();
      this.track(succeeded);
      this.emit('succeeded', succeeded, result);
    } catch (error) {
      const cause = abort.signal.aborted ? abort.signal.reason : error;
      if (cause instanceof CancelledError) {
        logger.info({ jobId: job.id, gpu: gpu.uuid }, 'cancelled probe stopped');
      } else if (cause instanceof InterferenceError) {
        // Nothing measured under interference is stored: the job waits and measures again once the GPU is idle.
        logger.warn(
          { jobId: job.id, gpu: gpu.uuid, why: cause.message },
          'another process started using the GPU during the probe: the measurements are dropped',
        );
        this.park(pending, `interfered: ${cause.message}`);
      } else {
        const storeFailed = isStoreWriteError(cause);
        const code = storeFailed ? ERROR_CODES.STORE_WRITE : errorCode(cause);
        const message = (storeFailed ? 'the result could not be stored: ' : '') + (cause instanceof Error ? cause.message : String(cause));
        const error = { code, message };
        // With the disk full or the file read-only, even this write may fail: the job's end is then known from memory.
        const written = this.safeWrite(() => jobs.finish(job.id, { state: 'failed', error }));
        logger.warn({ jobId: job.id, gpu: gpu.uuid, code, err: cause }, 'probe job failed; the previous result stays served');
        this.publish('failed', written ?? { ...job, state: 'failed', error, finishedAt: new Date().toISOString() });
      }
    } finally {
      await (probeWatch as ProbeWatch | null)?.stop();
      clearTimeout(timeout);
      await gpuLock?.release().catch((error: unknown) => logger.warn({ err: error }, 'releasing the GPU lock failed'));
    }
  }

  /** The look before a probe; a failed NVML read is no reason to stop measuring (nothing is known either way). */
  private async lookBeforeProbing(gpuUuid: string, watch: GpuWatchOptions): Promise<Look> {
    try {
      return await lookAtGpu(watch, gpuUuid, 0, watch.windowMs);
    } catch (error) {
      this.options.logger.warn(
        { err: error, gpu: gpuUuid },
        "reading the GPU's activity before the probe failed; measuring without knowing",
      );
      return {
        busy: false,
        reason: `activity unknown: ${error instanceof Error ? error.message : String(error)}`,
        activity: null,
        tenants: [],
      };
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

  private progressReporter(jobId: string): (phase: string, fraction: number) => void {
    const interval = this.options.progressWriteMs ?? 250;
    let lastWrite = 0;
    return (phase, fraction) => {
      const now = Date.now();
      if (now - lastWrite < interval && fraction < 1) return;
      lastWrite = now;
      const job = this.options.jobs.progress(jobId, phase, fraction);
      if (job) this.publish('progress', job);
    };
  }

  private finishCancelled(jobId: string, why: string): void {
    const job = this.options.jobs.finish(jobId, { state: 'cancelled', error: { code: CANCELLED_CODE, message: why } });
    this.options.logger.info({ jobId, why }, 'probe job cancelled');
    if (job) this.publish('cancelled', job);
  }
}

const CANCELLED_CODE = ERROR_CODES.PROBE_CANCELLED;

export class CancelledError extends Error {
  readonly code = CANCELLED_CODE;
}

/** Another process started using the GPU during the probe: what was measured cannot be trusted. */
export class InterferenceError extends Error {
  readonly code = ERROR_CODES.GPU_INTERFERED;
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
