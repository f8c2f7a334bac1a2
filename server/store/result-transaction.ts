import type { ProbeJob } from '../model/job.js';
import type { Db } from './database.js';
import type { JobStore } from './jobs.js';
import type { ResultStore, WritableResult } from './results.js';

/** The job whose success a result is stored with, and when it ended. */
export interface JobSuccess {
  jobId: string;
  finishedAt: string;
}

export interface WrittenResult {
  resultId: number;
  /** The job as the same transaction left it; null without one, or when it had moved on. */
  job: ProbeJob | null;
}

/** One result, its raw series and its job's success, in one transaction on `db` (whichever thread holds it). */
export function writeResult(
  db: Db,
  stores: { results: ResultStore; jobs: JobStore },
  row: WritableResult,
  success: JobSuccess | null,
): WrittenResult {
  return db.transaction(() => {
    const resultId = stores.results.insert(row);
    const job = success ? stores.jobs.finish(success.jobId, { state: 'succeeded', resultId }, success.finishedAt) : null;
    return { resultId, job };
  })();
}
