/**
 * The locks behind "one daemon per database" and "one measurement per GPU":
 * flock(2) held by a helper, so a user's own `flock <file> ./bench` and
 * topod exclude each other, and a holder that dies releases at once.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StartupError } from '../../../server/errors.js';
import { acquireLock, describeOwner, gpuLockFile, lockDatabase, ownerLine, resolvedDatabaseFile } from '../../../server/store/lock.js';
import { useTempDir } from '../../helpers/temp-dir.js';

/** A user's benchmark holding the lock the documented way, until `release` is called. */
function userHolds(file: string): Promise<{ release: () => Promise<void> }> {
  const child = spawn('flock', [file, 'sh', '-c', 'echo held; exec cat'], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve) => {
    child.stdout.once('data', () =>
      resolve({
        release: () =>
          new Promise<void>((done) => {
            child.once('close', () => done());
            child.stdin.end();
          }),
      }),
    );
  });
}

describe('file locks', () => {
  const tempDir = useTempDir();

  it('a second holder is refused while the first holds it, with the owner named, and gets it after release', async () => {
    const file = path.join(tempDir(), 'x.lock');
    const first = await acquireLock(file, { wait: false, owner: ownerLine('first', 4242) });
    expect(first.acquired).toBe(true);
    const second = await acquireLock(file, { wait: false, owner: ownerLine('second') });
    expect(second).toMatchObject({ acquired: false, owner: expect.stringMatching(/^pid 4242 on .* \(first since \d{4}-/) });
    if (first.acquired) await first.lock.release();
    const third = await acquireLock(file, { wait: false, owner: ownerLine('third') });
    expect(third.acquired).toBe(true);
    if (third.acquired) {
      expect(third.lock.held).toBe(true);
      await third.lock.release();
      expect(third.lock.held).toBe(false);
    }
  });

  it("waits for a user's own `flock <file> ./bench` on the GPU lock, then takes it", async () => {
    const file = gpuLockFile(tempDir(), 'GPU-12345678-aaaa-bbbb-cccc-1234567890ab');
    expect(path.basename(file)).toBe('gpu-GPU-12345678-aaaa-bbbb-cccc-1234567890ab.lock');
    const user = await userHolds(file);
    expect(await acquireLock(file, { wait: false, owner: 'topod' })).toMatchObject({ acquired: false });
    let taken = false;
    const waiting = acquireLock(file, { wait: true, owner: ownerLine('topod probe') }).then((a) => {
      taken = true;
      return a;
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(taken).toBe(false);
    await user.release();
    const attempt = await waiting;
    expect(attempt.acquired).toBe(true);
    expect(describeOwner(file)).toMatch(/\(topod probe since/);
    if (attempt.acquired) await attempt.lock.release();
  });

  it('a wait can be aborted', async () => {
    const file = path.join(tempDir(), 'y.lock');
    const held = await acquireLock(file, { wait: false, owner: 'a' });
    const abort = new AbortController();
    const waiting = acquireLock(file, { wait: true, owner: 'b', signal: abort.signal });
    setTimeout(() => abort.abort(new Error('cancelled')), 50);
    await expect(waiting).rejects.toThrow('cancelled');
    if (held.acquired) await held.lock.release();
  });

  it('lockDatabase refuses a second daemon with a StartupError naming the first; :memory: needs no lock', async () => {
    const db = path.join(tempDir(), 'topod.sqlite');
    const first = await lockDatabase(db);
    expect(JSON.parse(readFileSync(`${db}.lock`, 'utf8'))).toMatchObject({ pid: process.pid, role: 'topod daemon' });
    const second = lockDatabase(db, 300);
    await expect(second).rejects.toThrow(StartupError);
    await expect(lockDatabase(db, 0)).rejects.toThrow(
      new RegExp(`is in use by another topod, pid ${process.pid} on .*: stop that one, or give this one another TOPOD_DB`),
    );
    await first?.release();
    const again = await lockDatabase(db);
    await again?.release();
    expect(await lockDatabase(':memory:')).toBeNull();
  });

  it('a symbolic link to the database (or to its folder) locks the same lock: no second daemon through another name', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'data'));
    const db = path.join(dir, 'data', 'topod.sqlite');
    // Links made before the database exists: the first start creates it through either name.
    symlinkSync(db, path.join(dir, 'other.sqlite'));
    symlinkSync(path.join(dir, 'data'), path.join(dir, 'elsewhere'));
    symlinkSync('other.sqlite', path.join(dir, 'chained.sqlite'));
    for (const name of ['other.sqlite', 'elsewhere/topod.sqlite', 'chained.sqlite'])
      expect(resolvedDatabaseFile(path.join(dir, name))).toBe(resolvedDatabaseFile(db));
    const first = await lockDatabase(db);
    try {
      for (const name of ['other.sqlite', 'elsewhere/topod.sqlite', 'chained.sqlite']) {
        await expect(lockDatabase(path.join(dir, name), 0)).rejects.toThrow(/is in use by another topod/);
      }
    } finally {
      await first?.release();
    }
    const viaLink = await lockDatabase(path.join(dir, 'other.sqlite'));
    expect(JSON.parse(readFileSync(`${db}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
    await viaLink?.release();
  });
});
