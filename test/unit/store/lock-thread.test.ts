/**
 * GPU locks taken from the lock thread (server/store/lock-thread.ts): the
 * same flock(2) a user's `flock <file> ./bench` takes, held by helpers that
 * a worker thread spawns, so the daemon's event loop never waits for a fork.
 */
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LockKeeper, type LockReply } from '../../../server/store/lock-keeper.js';
import { LockThread } from '../../../server/store/lock-thread.js';
import { acquireLock, describeOwner, gpuLockFile, ownerLine } from '../../../server/store/lock.js';
import { useTempDir } from '../../helpers/temp-dir.js';

const threads: LockThread[] = [];
afterEach(async () => {
  for (const thread of threads.splice(0)) await thread.close();
});

function lockThread(): LockThread {
  const thread = new LockThread();
  threads.push(thread);
  return thread;
}

/** Whether another process could take the lock now (it takes and drops it at once). */
async function isFree(file: string): Promise<boolean> {
  const attempt = await acquireLock(file, { wait: false, owner: 'probe of the test' });
  if (attempt.acquired) await attempt.lock.release();
  return attempt.acquired;
}

/** Kills the helper holding `file` and its child, as an operator's stray `kill` would. */
function killHelper(file: string): void {
  const flock = execFileSync('pgrep', ['-f', `flock .*${file}`], { encoding: 'utf8' })
    .trim()
    .split('\n');
  for (const pid of flock) {
    const children = execFileSync('pgrep', ['-P', pid], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
    for (const child of [pid, ...children]) process.kill(Number(child), 'SIGKILL');
  }
}

describe('GPU locks from the lock thread', () => {
  const tempDir = useTempDir();

  it('takes a free lock, refuses a held one naming its owner, and frees it on release', async () => {
    const thread = lockThread();
    thread.prestart();
    const file = gpuLockFile(tempDir(), 'GPU-aaaaaaaa-1111-2222-3333-444444444444');
    const first = await thread.acquire(file, { wait: false, owner: ownerLine('first', 4242) });
    expect(first.acquired).toBe(true);
    expect(await isFree(file)).toBe(false);
    expect(await thread.acquire(file, { wait: false, owner: ownerLine('second') })).toMatchObject({
      acquired: false,
      owner: expect.stringMatching(/^pid 4242 on .* \(first since /),
    });
    if (!first.acquired) return;
    expect(first.lock.held).toBe(true);
    await Promise.all([first.lock.release(), first.lock.release()]);
    expect(first.lock.held).toBe(false);
    await first.lock.ended;
    expect(await isFree(file)).toBe(true);
  });

  it("waits for a user's own `flock <file> ./bench`, then takes it and names itself", async () => {
    const thread = lockThread();
    const file = path.join(tempDir(), 'gpu.lock');
    const user = spawn('flock', [file, 'sh', '-c', 'echo held; exec cat'], { stdio: ['pipe', 'pipe', 'inherit'] });
    await new Promise((resolve) => user.stdout.once('data', resolve));
    let taken = false;
    const waiting = thread.acquire(file, { wait: true, owner: ownerLine('topod probe') }).then((attempt) => {
      taken = true;
      return attempt;
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(taken).toBe(false);
    user.stdin.end();
    const attempt = await waiting;
    expect(attempt.acquired).toBe(true);
    expect(describeOwner(file)).toMatch(/\(topod probe since/);
    if (attempt.acquired) await attempt.lock.release();
  });

  it('an aborted wait rejects with the caller’s reason and leaves the lock to others', async () => {
    const thread = lockThread();
    const file = path.join(tempDir(), 'gpu.lock');
    const held = await acquireLock(file, { wait: false, owner: 'a benchmark' });
    const abort = new AbortController();
    const waiting = thread.acquire(file, { wait: true, owner: 'topod', signal: abort.signal });
    setTimeout(() => abort.abort(new Error('cancelled by the admin')), 50);
    await expect(waiting).rejects.toThrow('cancelled by the admin');
    await expect(thread.acquire(file, { wait: true, owner: 'topod', signal: abort.signal })).rejects.toThrow('cancelled by the admin');
    if (held.acquired) await held.lock.release();
    expect(await isFree(file)).toBe(true);
  });

  it('says a lock is no longer held once its helper was killed', async () => {
    const thread = lockThread();
    const file = path.join(tempDir(), 'killed.lock');
    const attempt = await thread.acquire(file, { wait: false, owner: 'topod' });
    if (!attempt.acquired) throw new Error('the lock was not free');
    killHelper(file);
    await attempt.lock.ended;
    expect(attempt.lock.held).toBe(false);
    expect(await isFree(file)).toBe(true);
    await attempt.lock.release();
  });

  it('releases what it holds when it is closed, and starts again on the next request', async () => {
    const thread = lockThread();
    const file = path.join(tempDir(), 'closed.lock');
    const attempt = await thread.acquire(file, { wait: false, owner: 'topod' });
    expect(attempt.acquired).toBe(true);
    await thread.close();
    if (attempt.acquired) await attempt.lock.ended;
    expect(await isFree(file)).toBe(true);
    const again = await thread.acquire(file, { wait: false, owner: 'topod' });
    expect(again.acquired).toBe(true);
    if (again.acquired) await again.lock.release();
  });

  it('rejects a lock file it cannot create, with the reason', async () => {
    const thread = lockThread();
    const notAFolder = path.join(tempDir(), 'a-file');
    writeFileSync(notAFolder, '');
    await expect(thread.acquire(path.join(notAFolder, 'gpu.lock'), { wait: false, owner: 'topod' })).rejects.toThrow(/EEXIST|ENOTDIR/);
  });
});

describe('the lock keeper (the lock thread’s side, run here)', () => {
  const tempDir = useTempDir();

  it('answers every request by id, and a release of a lock it does not hold', async () => {
    const replies: LockReply[] = [];
    const keeper = new LockKeeper((reply) => replies.push(reply));
    const file = path.join(tempDir(), 'keeper.lock');
    const next = async (count: number) => {
      while (replies.length < count) await new Promise((r) => setTimeout(r, 5));
      return replies.at(count - 1);
    };
    keeper.handle({ kind: 'acquire', id: 1, file, wait: false, owner: 'first' });
    expect(await next(1)).toEqual({ kind: 'acquired', id: 1 });
    keeper.handle({ kind: 'acquire', id: 2, file, wait: false, owner: 'second' });
    expect(await next(2)).toMatchObject({ kind: 'conflict', id: 2, owner: expect.stringContaining('first') });
    keeper.handle({ kind: 'acquire', id: 3, file, wait: true, owner: 'third' });
    keeper.handle({ kind: 'abort', id: 3 });
    expect(await next(3)).toMatchObject({ kind: 'failed', id: 3, unavailable: false });
    keeper.handle({ kind: 'release', id: 1 });
    expect(await next(4)).toEqual({ kind: 'released', id: 1 });
    keeper.handle({ kind: 'release', id: 99 });
    expect(await next(5)).toEqual({ kind: 'released', id: 99 });
    expect(await isFree(file)).toBe(true);
  });
});
