import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import { workerEntry, workerNiceIncrement } from '../paths.js';
import type { Db } from './database.js';
import type { CheckpointOutcome, CheckpointTask } from './checkpoint-worker.js';

/** How long the worker's connection waits for a writer before it gives up on one checkpoint (the next request retries). */
const BUSY_TIMEOUT_MS = 1_000;

/**
 * Moves WAL checkpoints off the event loop. SQLite checkpoints by itself
 * inside the commit that fills the WAL past 1000 pages: storing a probe's
 * result then took 34–49 ms every few probes instead of ~8 ms (issue 17,
 * BENCHMARKS.md "Serving while probing"). The serving connection's automatic
 * checkpoint is turned off, and each request runs a PASSIVE checkpoint in a
 * worker thread on its own connection; requests that arrive while one runs
 * are folded into one more run after it.
 */
export class WalCheckpointer {
  private readonly pool: Piscina<CheckpointTask, CheckpointOutcome>;
  private running: Promise<void> | null = null;
  private again = false;

  constructor(
    db: Db,
    private readonly file: string,
    private readonly logger?: Pick<Logger, 'warn' | 'debug'>,
    /** The thread's nice increment over the event loop's (TOPOD_WORKER_NICE). */
    nice = 0,
  ) {
    db.pragma('wal_autocheckpoint = 0');
    // Its thread starts with the daemon, so the first stored result does not also pay for starting one on the event loop.
    this.pool = new Piscina({
      ...workerEntry(import.meta.url, 'checkpoint-worker'),
      niceIncrement: workerNiceIncrement(nice),
      minThreads: 1,
      maxThreads: 1,
      idleTimeout: Number.POSITIVE_INFINITY,
    });
  }

  /** Checkpoints soon, off the event loop. */
  request(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.run().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.request();
      }
    });
  }

  /** Resolves when no checkpoint is running or asked for. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  async close(): Promise<void> {
    this.again = false;
    await this.settled();
    await this.pool.destroy();
  }

  private async run(): Promise<void> {
    try {
      const outcome = await this.pool.run({ file: this.file, busyTimeoutMs: BUSY_TIMEOUT_MS });
      this.logger?.debug(outcome, 'WAL checkpoint');
    } catch (error) {
      this.logger?.warn({ err: error }, 'a WAL checkpoint failed; the next stored result tries again');
    }
  }
}
