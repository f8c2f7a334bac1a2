import { randomUUID } from 'node:crypto';
import { ERROR_CODES } from '../errors.js';
import type { ProbeTarget } from '../model/document.js';
import { ACTIVE_JOB_STATES, type JobPage, type JobPosition, type JobQuery, type JobState, type ProbeJob } from '../model/job.js';
import type { Db } from './database.js';

interface JobRow {
  id: string;
  gpu_uuid: string;
  state: JobState;
  phase: string | null;
  progress: number;
  error_code: string | null;
  error_message: string | null;
  reason: string;
  requested_by: string;
  only_elements: string | null;
  force: number;
  even_if_busy: number;
  waiting_since: string | null;
  result_id: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

function fromRow(row: JobRow): ProbeJob {
  return {
    id: row.id,
    gpuUuid: row.gpu_uuid,
    state: row.state,
    phase: row.phase,
    progress: row.progress,
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? '' } : null,
    reason: row.reason,
    requestedBy: row.requested_by,
    only: parseOnly(row.only_elements),
    force: row.force === 1,
    evenIfBusy: row.even_if_busy === 1,
    waitingSince: row.waiting_since,
    resultId: row.result_id,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

/** A job's `only` list; an unreadable one (a damaged row) reads as null rather than stopping whoever lists jobs. */
function parseOnly(text: string | null): ProbeTarget[] | null {
  if (!text) return null;
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as ProbeTarget[]) : null;
  } catch {
    return null;
  }
}

export interface NewJob {
  gpuUuid: string;
  reason: string;
  requestedBy: string;
  only: ProbeTarget[] | null;
  force: boolean;
  evenIfBusy?: boolean;
}

/** The active states as an SQL list. */
const ACTIVE = `(${ACTIVE_JOB_STATES.map((state) => `'${state}'`).join(', ')})`;

export const INTERRUPTED_CODE = ERROR_CODES.PROBE_INTERRUPTED;

/** Probe jobs in SQLite: the record of what was asked, by whom, and how it ended. */
export class JobStore {
  private readonly insertJob;
  private readonly selectById;
  private readonly selectActive;
  private readonly markStarted;
  private readonly markProgress;
  private readonly markWaiting;
  private readonly markFinished;
  private readonly selectInterrupted;

  constructor(private readonly db: Db) {
    this.insertJob =
      db.prepare(`INSERT INTO probe_jobs (id, gpu_uuid, state, reason, requested_by, only_elements, force, even_if_busy, created_at)
      VALUES (@id, @gpuUuid, 'queued', @reason, @requestedBy, @only, @force, @evenIfBusy, @createdAt) RETURNING *`);
    this.selectById = db.prepare('SELECT * FROM probe_jobs WHERE id = ?');
    this.selectActive = db.prepare(`SELECT * FROM probe_jobs WHERE gpu_uuid = ? AND state IN ${ACTIVE}`);
    // RETURNING *: each write hands back the job as it now is, so no caller reads it again.
    this.markStarted = db.prepare(
      "UPDATE probe_jobs SET state = 'running', started_at = ?, phase = 'starting' WHERE id = ? AND state IN ('queued', 'waiting') RETURNING *",
    );
    this.markWaiting = db.prepare(`UPDATE probe_jobs SET state = 'waiting', phase = @why, waiting_since = COALESCE(waiting_since, @now)
      WHERE id = @id AND state IN ('queued', 'waiting', 'running') RETURNING *`);
    this.markProgress = db.prepare("UPDATE probe_jobs SET phase = ?, progress = ? WHERE id = ? AND state = 'running' RETURNING *");
    this.markFinished = db.prepare(`UPDATE probe_jobs SET state = @state, finished_at = @finishedAt, error_code = @errorCode,
      error_message = @errorMessage, result_id = @resultId, progress = CASE WHEN @state = 'succeeded' THEN 1 ELSE progress END
      WHERE id = @id AND state IN ${ACTIVE} RETURNING *`);
    this.selectInterrupted = db.prepare(`SELECT * FROM probe_jobs WHERE state IN ${ACTIVE}`);
  }

  create(job: NewJob, now = new Date().toISOString()): ProbeJob {
    const id = randomUUID();
    const row = this.insertJob.get({
      id,
      gpuUuid: job.gpuUuid,
      reason: job.reason,
      requestedBy: job.requestedBy,
      only: job.only ? JSON.stringify(job.only) : null,
      force: job.force ? 1 : 0,
      evenIfBusy: job.evenIfBusy ? 1 : 0,
      createdAt: now,
    }) as JobRow;
    return fromRow(row);
  }

  get(id: string): ProbeJob | null {
    const row = this.selectById.get(id) as JobRow | undefined;
    return row ? fromRow(row) : null;
  }

  activeFor(gpuUuid: string): ProbeJob | null {
    const row = this.selectActive.get(gpuUuid) as JobRow | undefined;
    return row ? fromRow(row) : null;
  }

  /** The job as started; null when it was no longer queued (cancelled meanwhile). */
  start(id: string, now = new Date().toISOString()): ProbeJob | null {
    return this.returned(this.markStarted.get(now, id));
  }

  /** The job waiting for its busy GPU, `why` in its phase; null when it has ended meanwhile. */
  wait(id: string, why: string, now = new Date().toISOString()): ProbeJob | null {
    return this.returned(this.markWaiting.get({ id, why, now }));
  }

  /** The job with its new phase; null when it is no longer running. */
  progress(id: string, phase: string, fraction: number): ProbeJob | null {
    return this.returned(this.markProgress.get(phase, Math.min(1, Math.max(0, fraction)), id));
  }

  finish(
    id: string,
    outcome: { state: 'succeeded'; resultId: number } | { state: 'failed' | 'cancelled'; error: { code: string; message: string } },
    now = new Date().toISOString(),
  ): ProbeJob | null {
    return this.returned(
      this.markFinished.get({
        id,
        state: outcome.state,
        finishedAt: now,
        errorCode: outcome.state === 'succeeded' ? null : outcome.error.code,
        errorMessage: outcome.state === 'succeeded' ? null : outcome.error.message,
        resultId: outcome.state === 'succeeded' ? outcome.resultId : null,
      }),
    );
  }

  /** A write's RETURNING row as a job; null when the write matched nothing (the job had moved on). */
  private returned(row: unknown): ProbeJob | null {
    return row ? fromRow(row as JobRow) : null;
  }

  /** Jobs a previous process left queued or running (a crash or kill -9): mark them failed. */
  failInterrupted(now = new Date().toISOString()): ProbeJob[] {
    const rows = this.selectInterrupted.all() as JobRow[];
    const failed = this.db.transaction(() =>
      rows.map((row) =>
        this.finish(
          row.id,
          { state: 'failed', error: { code: INTERRUPTED_CODE, message: `the daemon stopped while this job was ${row.state}` } },
          now,
        ),
      ),
    )();
    return failed.filter((job): job is ProbeJob => job !== null);
  }

  list(query: JobQuery): ProbeJob[] {
    const { where, params } = filters(query);
    const sql = `SELECT * FROM probe_jobs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, rowid DESC LIMIT ?`;
    params.push(query.limit ?? 100);
    return (this.db.prepare(sql).all(...params) as JobRow[]).map(fromRow);
  }

  /**
   * One page of jobs for a client walking the whole history (keyset paging).
   * Ordered by (created_at, id), both descending — a total order on columns
   * that never change, so the page after `after` neither repeats nor skips a
   * job, however many are created meanwhile (new ones sort before every page
   * already handed out). Jobs created in the same millisecond follow their id.
   */
  page(query: JobQuery, after: JobPosition | null = null): JobPage {
    const { where, params } = filters(query);
    if (after) {
      where.push('(created_at < ? OR (created_at = ? AND id < ?))');
      params.push(after.createdAt, after.createdAt, after.id);
    }
    const limit = query.limit ?? 100;
    // One row more than asked says whether another page follows, without a COUNT.
    const sql = `SELECT * FROM probe_jobs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ?`;
    params.push(limit + 1);
    const rows = this.db.prepare(sql).all(...params) as JobRow[];
    const jobs = rows.slice(0, limit).map(fromRow);
    const last = jobs.at(-1);
    return { jobs, next: rows.length > limit && last ? { createdAt: last.createdAt, id: last.id } : null };
  }
}

/** The WHERE terms and parameters of a job query's filters (GPU, state). */
function filters(query: JobQuery): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (query.gpu) {
    where.push('gpu_uuid = ?');
    params.push(query.gpu);
  }
  if (query.state) {
    where.push('state = ?');
    params.push(query.state);
  }
  return { where, params };
}
