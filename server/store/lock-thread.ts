/**
 * GPU locks taken from a thread of their own (issue 17.5). A lock is a
 * `flock` helper process (./lock.ts), and spawning one forks the daemon:
 * 4–5 ms during which the event loop answered nothing, once per probe on the
 * H100 hosts. Here a worker thread spawns and holds the helpers, so only that
 * thread waits for the fork. What a lock means is unchanged: the helper holds
 * flock(2) on the file, and when the daemon dies its pipes close and the
 * kernel releases the lock.
 */
import { Worker } from 'node:worker_threads';
import { workerEntry } from '../paths.js';
import type { LockReply, LockRequest } from './lock-keeper.js';
import { LockUnavailableError, type HeldLock, type LockAttempt } from './lock.js';

export class LockThread {
  private worker: Worker | null = null;
  private nextId = 1;
  /** Who waits for the next reply about each request id. */
  private readonly waiting = new Map<number, (reply: LockReply | null) => void>();
  /** Ids of the locks held now. */
  private readonly held = new Set<number>();
  private readonly releasing = new Map<number, Promise<void>>();
  /** Settles each held lock's `ended`. */
  private readonly endings = new Map<number, () => void>();

  /** As acquireLock (./lock.ts), the helper spawned and held by the lock thread. */
  acquire(file: string, options: { wait: boolean; owner: string; signal?: AbortSignal }): Promise<LockAttempt> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));
    const id = this.nextId++;
    return new Promise<LockAttempt>((resolve, reject) => {
      let abandoned = false;
      const onAbort = () => {
        abandoned = true;
        this.post({ kind: 'abort', id });
        reject(signal?.reason ?? new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.expect(id, (reply) => {
        signal?.removeEventListener('abort', onAbort);
        if (abandoned) {
          // Taken just as the caller gave up: nobody will release it, so it is released here.
          if (reply?.kind === 'acquired') {
            this.held.add(id);
            void this.release(id);
          }
          return;
        }
        if (reply === null) reject(new LockUnavailableError('the lock thread stopped'));
        else if (reply.kind === 'acquired') {
          this.held.add(id);
          resolve({ acquired: true, lock: this.heldLock(id, file) });
        } else if (reply.kind === 'conflict') resolve({ acquired: false, owner: reply.owner });
        else if (reply.kind === 'failed') reject(reply.unavailable ? new LockUnavailableError(reply.message) : new Error(reply.message));
        else reject(new Error(`unexpected lock reply ${reply.kind}`));
      });
      this.post({ kind: 'acquire', id, file, wait: options.wait, owner: options.owner });
    });
  }

  /** Starts the thread now rather than at the first lock: creating a worker costs the event loop about 1 ms. */
  prestart(): void {
    this.start();
  }

  /** Stops the thread; a lock still held is released with it (the helpers' pipes close). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private heldLock(id: number, file: string): HeldLock {
    const ended = new Promise<void>((done) => this.endings.set(id, done));
    const held = this.held;
    return {
      file,
      get held() {
        return held.has(id);
      },
      ended,
      release: () => this.release(id),
    };
  }

  /** One release per lock, however often it is asked for. */
  private release(id: number): Promise<void> {
    const pending = this.releasing.get(id);
    if (pending) return pending;
    if (!this.held.has(id)) return Promise.resolve();
    const released = new Promise<LockReply | null>((done) => this.expect(id, done));
    this.post({ kind: 'release', id });
    const releasing = released
      .then((reply) => {
        if (reply?.kind === 'released' && reply.error) throw new Error(reply.error);
      })
      .finally(() => {
        this.releasing.delete(id);
        this.end(id);
      });
    this.releasing.set(id, releasing);
    return releasing;
  }

  private end(id: number): void {
    this.held.delete(id);
    this.endings.get(id)?.();
    this.endings.delete(id);
  }

  private expect(id: number, settle: (reply: LockReply | null) => void): void {
    this.waiting.set(id, settle);
    this.worker?.ref();
  }

  private post(request: LockRequest): void {
    this.start().postMessage(request);
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const entry = workerEntry(import.meta.url, 'lock-worker');
    const worker = new Worker(new URL(entry.filename), { execArgv: entry.execArgv });
    this.worker = worker;
    worker.on('message', (reply: LockReply) => {
      if (reply.kind === 'lost') {
        this.end(reply.id);
        return;
      }
      const settle = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      this.unrefWhenIdle();
      settle?.(reply);
    });
    const stopped = () => {
      if (this.worker === worker) this.worker = null;
      for (const id of [...this.held]) this.end(id);
      const settles = [...this.waiting.values()];
      this.waiting.clear();
      for (const settle of settles) settle(null);
    };
    worker.on('error', stopped);
    worker.on('exit', stopped);
    if (this.waiting.size === 0) worker.unref();
    return worker;
  }

  /** Held locks do not keep the process alive (as acquireLock's helpers do not); a request on its way does. */
  private unrefWhenIdle(): void {
    if (this.waiting.size === 0) this.worker?.unref();
  }
}
