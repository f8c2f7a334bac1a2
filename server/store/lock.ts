/**
 * Advisory file locks: one daemon per database, one measurement per GPU.
 *
 * Why flock(2), held by a util-linux `flock` helper process:
 * - the kernel drops it when its holder dies: a daemon killed with -9 leaves
 *   no stale lock to clean up (a pid file alone would need a liveness guess,
 *   wrong across PID namespaces and after pid reuse);
 * - it is the lock users already have: a benchmark run as
 *   `flock /run/topod/gpu-<uuid>.lock ./my-benchmark` waits for topod's probe
 *   and topod waits for it (fcntl locks, which SQLite's locking mode uses,
 *   are invisible to flock(1) on Linux);
 * - the database lock stays off the database file, so `sqlite3` can still
 *   read the live database for inspection (SQLite's `locking_mode=EXCLUSIVE`
 *   would shut every other reader out and name no owner).
 * Node has no flock binding, so a tiny helper holds it: `flock <file> sh -c
 * 'echo locked; exec cat'`. Its stdin is a pipe from the daemon; when the
 * daemon exits in any way the pipe closes, cat ends and the lock is released.
 * The holder writes who it is (pid, host, start time) into the lock file, so
 * a refused second daemon can name the first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { ERROR_CODES, StartupError } from '../errors.js';

const CONFLICT_EXIT = 75;

export interface HeldLock {
  readonly file: string;
  /** False once the helper died on its own (someone killed it): the lock is no longer held. */
  readonly held: boolean;
  /** Settles when the helper has exited, by release or on its own: from then on the lock is free. */
  readonly ended: Promise<void>;
  release(): Promise<void>;
}

export type LockAttempt = { acquired: true; lock: HeldLock } | { acquired: false; owner: string };

export class LockUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LockUnavailableError';
  }
}

/** What a holder writes into the lock file. */
export function ownerLine(role: string, pid = process.pid): string {
  return JSON.stringify({ pid, host: hostname(), role, since: new Date().toISOString() });
}

/** The owner recorded in a lock file, for messages: "pid 1234 on host (topod daemon since …)". */
export function describeOwner(file: string): string {
  let text = '';
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch {
    return 'an unknown process';
  }
  try {
    const owner = JSON.parse(text) as { pid?: number; host?: string; role?: string; since?: string };
    return `pid ${owner.pid ?? '?'} on ${owner.host ?? '?'} (${owner.role ?? 'unknown'} since ${owner.since ?? '?'})`;
  } catch {
    return text === '' ? 'a process that recorded no owner (flock(1) run by hand?)' : `"${text.slice(0, 80)}"`;
  }
}

/**
 * Takes an exclusive flock on `file` (created with its folder). `wait: false`
 * answers at once whether the lock was free; `wait: true` blocks until it is
 * (or `signal` aborts). The owner text is written into the file once held.
 */
export function acquireLock(file: string, options: { wait: boolean; owner: string; signal?: AbortSignal }): Promise<LockAttempt> {
  mkdirSync(path.dirname(file), { recursive: true });
  const args = [
    '--exclusive',
    ...(options.wait ? [] : ['--nonblock']),
    '--conflict-exit-code',
    String(CONFLICT_EXIT),
    file,
    'sh',
    '-c',
    'echo locked; exec cat',
  ];
  return new Promise<LockAttempt>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn('flock', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (error) {
      reject(error);
      return;
    }
    let settled = false;
    let held = false;
    let stderr = '';
    const exited = new Promise<void>((done) => child.once('close', () => done()));
    const onAbort = () => child.kill('SIGKILL');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => {
      if (held || !chunk.toString().includes('locked')) return;
      held = true;
      try {
        writeFileSync(file, `${options.owner}\n`);
      } catch {
        // The lock holds even if the owner note cannot be written (read-only lock folder).
      }
      // Held: the helper must not keep the daemon's event loop alive by itself (until release waits for it).
      setReferenced(child, false);
      const lock: HeldLock = {
        file,
        get held() {
          return child.exitCode === null && child.signalCode === null;
        },
        ended: exited,
        async release() {
          setReferenced(child, true);
          child.stdin?.end();
          await exited;
        },
      };
      finish(() => resolve({ acquired: true, lock }));
    });
    child.once('error', (error: NodeJS.ErrnoException) => {
      finish(() =>
        reject(
          error.code === 'ENOENT'
            ? new LockUnavailableError('flock(1) is not installed (util-linux): topod needs it to lock its database and GPUs')
            : error,
        ),
      );
    });
    child.once('close', (code) => {
      if (held) return;
      if (code === CONFLICT_EXIT) finish(() => resolve({ acquired: false, owner: describeOwner(file) }));
      else if (options.signal?.aborted) finish(() => reject(options.signal?.reason ?? new Error('aborted')));
      else finish(() => reject(new LockUnavailableError(`flock ${file} failed (exit ${code}): ${stderr.trim() || 'no message'}`)));
    });
  });
}

function setReferenced(child: ChildProcess, referenced: boolean): void {
  const method = referenced ? 'ref' : 'unref';
  child[method]();
  for (const stream of [child.stdin, child.stdout, child.stderr])
    (stream as unknown as Record<string, (() => void) | undefined> | null)?.[method]?.();
}

/** The per-GPU lock file under the lock folder: `gpu-<UUID>.lock`. */
export function gpuLockFile(lockDir: string, uuid: string): string {
  return path.join(lockDir, `gpu-${uuid.replace(/[^A-Za-z0-9_.-]/g, '_')}.lock`);
}

/** How long a second daemon retries before refusing: a holder just killed releases within milliseconds. */
const DATABASE_LOCK_PATIENCE_MS = 2000;

/** Symbolic links a path may pass through before it counts as a loop (Linux's own limit). */
const MAX_SYMLINK_HOPS = 40;

/**
 * The file a database path names once every symbolic link is followed — the
 * link itself, links in its folders, and a link to a file not created yet —
 * so two names of one file lock one lock (`ln -s data/topod.sqlite other.sqlite`
 * started a second daemon on the same database, issue 22).
 */
export function resolvedDatabaseFile(dbFile: string): string {
  let current = path.resolve(dbFile);
  for (let hops = 0; hops < MAX_SYMLINK_HOPS; hops++) {
    let target: string;
    try {
      target = readlinkSync(current);
    } catch {
      break; // not a link (EINVAL), or nothing there yet (ENOENT)
    }
    current = path.resolve(path.dirname(current), target);
  }
  try {
    return path.join(realpathSync(path.dirname(current)), path.basename(current));
  } catch {
    return current; // the folder does not exist yet: no link in it to follow
  }
}

/**
 * One daemon per database: the lock `<db>.lock` beside the file the path
 * resolves to, held for the process's life. A second daemon is refused with
 * a StartupError naming the first (pid, host, since when). Nothing to lock
 * for `:memory:`.
 */
export async function lockDatabase(dbFile: string, patienceMs = DATABASE_LOCK_PATIENCE_MS): Promise<HeldLock | null> {
  if (dbFile === ':memory:') return null;
  const resolved = resolvedDatabaseFile(dbFile);
  const file = `${resolved}.lock`;
  const deadline = Date.now() + patienceMs;
  for (;;) {
    let attempt: LockAttempt;
    try {
      attempt = await acquireLock(file, { wait: false, owner: ownerLine('topod daemon') });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new StartupError(ERROR_CODES.STORE_OPEN, `cannot lock the database ${file}: ${why}`, { cause: error });
    }
    if (attempt.acquired) return attempt.lock;
    if (Date.now() >= deadline) {
      throw new StartupError(
        ERROR_CODES.STORE_LOCKED,
        `the database ${path.resolve(dbFile)}${resolved === path.resolve(dbFile) ? '' : ` (${resolved})`} is in use by another topod, ${attempt.owner}: stop that one, or give this one another TOPOD_DB (--db)`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
