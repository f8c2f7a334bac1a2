/**
 * Work computed once and shared by every test file: vitest runs each file in
 * a process of its own (pool forks), so a module-level memo only lasts one
 * file. A value is written to a folder the whole run shares (made and
 * removed by test/helpers/global-setup.ts); a lock file makes the other
 * processes that want the same key at the same time wait for the first
 * instead of computing it again. Outside vitest the value lives in the
 * process only.
 *
 * The run folder is deleted when the run ends, so a result of server code
 * (a simulated discovery) is computed afresh in every run: what the run's
 * coverage counts and what its tests read are that run's code.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A folder shared by every test file of this run, removed when the run ends. */
    testRunCacheDir: string;
  }
}

const LOCK_POLL_MS = 100;
/** A lock still empty this long after it was made lost its holder between creating and writing it. */
const EMPTY_LOCK_STALE_MS = 10_000;

/** The run's shared folder, or null outside a vitest run with the global setup (a script importing a helper). */
export function runCacheDir(): string | null {
  try {
    return inject('testRunCacheDir') ?? null;
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether a lock's holder died without releasing it: its pid is gone, or it never wrote one (empty for seconds). */
function lockHolderGone(lockPath: string): boolean {
  let holder: string;
  let ageMs: number;
  try {
    holder = readFileSync(lockPath, 'utf8');
    ageMs = Date.now() - statSync(lockPath).mtimeMs;
  } catch {
    return false; // released meanwhile: the next round sees the result or takes the lock
  }
  return holder === '' ? ageMs > EMPTY_LOCK_STALE_MS : !processAlive(Number(holder));
}

/**
 * Runs `make` once for `donePath` among every process of the run: the first
 * to take `${donePath}.lock` makes it (and must leave `donePath` in place,
 * atomically), the others wait until it exists. A lock whose holder died is
 * taken over; a `make` that throws releases the lock, so the next waiter tries.
 */
export async function onceAcrossProcesses(donePath: string, make: () => Promise<void>): Promise<void> {
  const lockPath = `${donePath}.lock`;
  mkdirSync(path.dirname(donePath), { recursive: true });
  for (;;) {
    if (existsSync(donePath)) return;
    let fd: number;
    try {
      fd = openSync(lockPath, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (lockHolderGone(lockPath)) rmSync(lockPath, { force: true });
      else await sleep(LOCK_POLL_MS);
      continue;
    }
    try {
      writeSync(fd, String(process.pid));
      closeSync(fd);
      if (!existsSync(donePath)) await make();
      return;
    } finally {
      rmSync(lockPath, { force: true });
    }
  }
}

const inProcess = new Map<string, Promise<Buffer>>();

/**
 * `compute()`'s value for `key`, computed once per run across every test
 * file. Each call returns a fresh copy (structured-clone semantics: plain
 * data, typed arrays, Dates, -0, NaN and undefined survive; class instances
 * come back as plain objects), so no test sees another's mutations.
 * `compute` must not itself call sharedOnce (a process waiting on a lock it
 * would need could deadlock with another).
 */
export async function sharedOnce<T>(key: string, compute: () => Promise<T>): Promise<T> {
  if (!/^[\w.+-]+$/.test(key)) throw new Error(`sharedOnce: key must be a file name ([A-Za-z0-9_.+-]), got "${key}"`);
  let bytes = inProcess.get(key);
  if (!bytes) {
    bytes = readOrCompute(key, compute);
    inProcess.set(key, bytes);
    bytes.catch(() => inProcess.delete(key));
  }
  return deserialize(await bytes) as T;
}

async function readOrCompute<T>(key: string, compute: () => Promise<T>): Promise<Buffer> {
  const dir = runCacheDir();
  if (dir === null) return serialize(await compute());
  const file = path.join(dir, `${key}.v8`);
  let made: Buffer | null = null;
  await onceAcrossProcesses(file, async () => {
    made = serialize(await compute());
    writeFileSync(`${file}.${process.pid}.tmp`, made);
    renameSync(`${file}.${process.pid}.tmp`, file);
  });
  return made ?? readFileSync(file);
}
