/**
 * A worker thread's entry (piscina): writes results on a connection of its
 * own to the daemon's database file (result-writer.ts).
 */
import Database from 'better-sqlite3';
import { errorToData, type ErrorData } from '../errors.js';
import type { ProbeJob } from '../model/job.js';
import type { Db } from './database.js';
import { JobStore } from './jobs.js';
import { ResultStore, type WritableResult } from './results.js';
import { writeResult as writeInTransaction, type JobSuccess } from './result-transaction.js';

export interface ResultWriteTask {
  file: string;
  row: WritableResult;
  success: JobSuccess | null;
}

/** A failure travels as data: a thrown Error loses its SQLite code on the way back. */
export type ResultWriteOutcome = { ok: true; resultId: number; job: ProbeJob | null } | { ok: false; error: ErrorData };

/** As the serving connection waits for a writer (store/database.ts). */
const BUSY_TIMEOUT_MS = 5000;

let connection: { file: string; db: Db; results: ResultStore; jobs: JobStore } | null = null;

function open(file: string): NonNullable<typeof connection> {
  if (connection?.file === file) return connection;
  connection?.db.close();
  const db = new Database(file, { fileMustExist: true });
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // Checkpoints stay with the WAL checkpointer's thread (wal-checkpointer.ts), never inside this commit.
  db.pragma('wal_autocheckpoint = 0');
  connection = { file, db, results: new ResultStore(db), jobs: new JobStore(db) };
  return connection;
}

export default function writeResult(task: ResultWriteTask): ResultWriteOutcome {
  try {
    const { db, ...stores } = open(task.file);
    return { ok: true, ...writeInTransaction(db, stores, task.row, task.success) };
  } catch (error) {
    return { ok: false, error: errorToData(error) };
  }
}
