/**
 * The side of ./lock-thread.ts that runs on the lock thread: takes, holds and
 * releases flock helpers (./lock.ts) as requests name them, and says when a
 * held one ended on its own. Kept apart from the thread's entry
 * (./lock-worker.ts) so it runs, and is tested, on any thread.
 */
import { acquireLock, LockUnavailableError, type HeldLock } from './lock.js';

export type LockRequest =
  | { kind: 'acquire'; id: number; file: string; wait: boolean; owner: string }
  | { kind: 'abort'; id: number }
  | { kind: 'release'; id: number };

export type LockReply =
  | { kind: 'acquired'; id: number }
  | { kind: 'conflict'; id: number; owner: string }
  | { kind: 'failed'; id: number; message: string; unavailable: boolean }
  | { kind: 'released'; id: number; error?: string }
  /** A held lock's helper ended without a release (someone killed it): the lock is free. */
  | { kind: 'lost'; id: number };

export class LockKeeper {
  private readonly held = new Map<number, HeldLock>();
  private readonly attempts = new Map<number, AbortController>();

  constructor(private readonly reply: (reply: LockReply) => void) {}

  handle(request: LockRequest): void {
    if (request.kind === 'acquire') void this.acquire(request);
    else if (request.kind === 'abort') this.attempts.get(request.id)?.abort(new Error('the lock request was aborted'));
    else void this.release(request.id);
  }

  private async acquire({ id, file, wait, owner }: Extract<LockRequest, { kind: 'acquire' }>): Promise<void> {
    const attempt = new AbortController();
    this.attempts.set(id, attempt);
    try {
      const outcome = await acquireLock(file, { wait, owner, signal: attempt.signal });
      if (!outcome.acquired) {
        this.reply({ kind: 'conflict', id, owner: outcome.owner });
        return;
      }
      this.held.set(id, outcome.lock);
      void outcome.lock.ended.then(() => {
        if (this.held.delete(id)) this.reply({ kind: 'lost', id });
      });
      this.reply({ kind: 'acquired', id });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.reply({ kind: 'failed', id, message, unavailable: error instanceof LockUnavailableError });
    } finally {
      this.attempts.delete(id);
    }
  }

  private async release(id: number): Promise<void> {
    const lock = this.held.get(id);
    this.held.delete(id);
    try {
      await lock?.release();
      this.reply({ kind: 'released', id });
    } catch (error) {
      this.reply({ kind: 'released', id, error: error instanceof Error ? error.message : String(error) });
    }
  }
}
