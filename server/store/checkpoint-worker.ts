/**
 * A worker thread's entry (piscina): checkpoints the database's WAL into the
 * main file on a connection of its own, so the copy never runs inside a
 * commit on the event loop (wal-checkpointer.ts).
 */
import Database from 'better-sqlite3';

export interface CheckpointTask {
  file: string;
  busyTimeoutMs: number;
}

/** PRAGMA wal_checkpoint(PASSIVE)'s answer: whether a writer blocked it, WAL frames, frames copied. */
export interface CheckpointOutcome {
  busy: number;
  walFrames: number;
  checkpointedFrames: number;
}

export default function checkpoint(task: CheckpointTask): CheckpointOutcome {
  const db = new Database(task.file, { fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${task.busyTimeoutMs}`);
    const [row] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    return { busy: row?.busy ?? 0, walFrames: row?.log ?? 0, checkpointedFrames: row?.checkpointed ?? 0 };
  } finally {
    db.close();
  }
}
