import { Piscina } from 'piscina';
import { errorFromData } from '../errors.js';
import { workerEntry } from '../paths.js';
import type { Db } from './database.js';
import type { JobStore } from './jobs.js';
import type { ResultStore, WritableResult } from './results.js';
import { writeResult, type JobSuccess, type WrittenResult } from './result-transaction.js';
import type { ResultWriteOutcome, ResultWriteTask } from './result-writer-worker.js';

export type { JobSuccess, WrittenResult } from './result-transaction.js';

/**
 * Writes a result, its raw series and its job's success in one transaction
 * (DESIGN.md: a result is stored with its job's end). In-process for a
 * database in memory (tests); for a file, on a connection of a thread of its
 * own, so the event loop never runs the 5-12 ms a probe's megabyte of series
 * takes to insert and commit (issue 17.5, BENCHMARKS.md "Serving while
 * probing"). WAL lets the serving connection read meanwhile.
 */
export interface ResultWriter {
  write(row: WritableResult, success: JobSuccess | null): Promise<WrittenResult>;
  close(): Promise<void>;
}

export function inProcessResultWriter(db: Db, results: ResultStore, jobs: JobStore): ResultWriter {
  return {
    write: async (row, success) => writeResult(db, { results, jobs }, row, success),
    close: async () => undefined,
  };
}

export class ThreadResultWriter implements ResultWriter {
  private readonly pool: Piscina<ResultWriteTask, ResultWriteOutcome>;

  /** `file`: the database, already migrated by the serving connection. */
  constructor(private readonly file: string) {
    // Not lowered like the other workers (TOPOD_WORKER_NICE): a writer that waits for a core holds SQLite's write
    // lock meanwhile, and the event loop's own writes would wait on it.
    this.pool = new Piscina({
      ...workerEntry(import.meta.url, 'result-writer-worker'),
      minThreads: 1,
      maxThreads: 1,
      idleTimeout: Number.POSITIVE_INFINITY,
    });
  }

  async write(row: WritableResult, success: JobSuccess | null): Promise<WrittenResult> {
    const transferList = movableBuffers(row);
    const outcome = await this.pool.run({ file: this.file, row, success }, { transferList });
    if (!outcome.ok) throw errorFromData(outcome.error);
    return { resultId: outcome.resultId, job: outcome.job };
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}

/**
 * The series' buffers that can move to the writer instead of being copied (nothing here reads them after): each
 * one a view of a whole ArrayBuffer of its own. Never a Node Buffer, which may be a slice of the shared pool.
 */
function movableBuffers(row: WritableResult): ArrayBuffer[] {
  const movable = new Set<ArrayBuffer>();
  for (const series of row.raw) {
    if (!('data' in series) || Buffer.isBuffer(series.data)) continue;
    const { buffer, byteOffset, byteLength } = series.data;
    if (buffer instanceof ArrayBuffer && byteOffset === 0 && byteLength === buffer.byteLength) movable.add(buffer);
  }
  return [...movable];
}
