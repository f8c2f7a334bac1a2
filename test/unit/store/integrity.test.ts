/**
 * A damaged or foreign database never stops the daemon: it is moved aside
 * (never deleted) with a timestamped name, a fresh store is opened, and what
 * can still be read is salvaged. Before, `new Database()` or the first query
 * threw "database disk image is malformed" / "file is not a database" and the
 * daemon died at every start.
 */
import Database from 'better-sqlite3';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StartupError } from '../../../server/errors.js';
import { openDatabase } from '../../../server/store/database.js';
import { GpuStore } from '../../../server/store/gpus.js';
import { JobStore } from '../../../server/store/jobs.js';
import { openStore } from '../../../server/store/integrity.js';
import { ResultStore, type NewResult } from '../../../server/store/results.js';
import type { ResultDocument } from '../../../server/model/document.js';
import { gpuIdentity, resultRow } from '../../helpers/fakes.js';
import { useTempDir } from '../../helpers/temp-dir.js';

const NOW = new Date('2026-05-01T10:20:30.456Z');

function result(l1: number): NewResult {
  return resultRow(l1, { createdAt: NOW.toISOString() });
}

/** A checkpointed database with `count` results (each ~3 KiB, so they span many pages), each from a finished job. */
function populated(file: string, count: number, padBytes = 3000): void {
  const db = openDatabase(file);
  new GpuStore(db).seen(gpuIdentity());
  const results = new ResultStore(db);
  const jobs = new JobStore(db);
  for (let i = 1; i <= count; i++) {
    const job = jobs.create({ gpuUuid: gpuIdentity().uuid, reason: 'requested', requestedBy: 'test', only: null, force: false });
    const id = results.insert({
      ...result(i),
      document: { ...result(i).document, pad: 'x'.repeat(padBytes) } as unknown as ResultDocument,
    });
    jobs.finish(job.id, { state: 'succeeded', resultId: id });
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

function overwrite(file: string, offset: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  writeSync(fd, bytes, 0, bytes.length, offset);
  closeSync(fd);
}

const asideFiles = (dir: string) => readdirSync(dir).filter((f) => f.includes('.damaged-') && !f.endsWith('-wal') && !f.endsWith('-shm'));

describe('openStore', () => {
  const tempDir = useTempDir();

  it('checks a sound file with integrity_check and opens it as it is', () => {
    const file = path.join(tempDir(), 'topod.sqlite');
    populated(file, 20);
    const opened = openStore(file);
    expect(opened.boot).toMatchObject({ check: 'integrity_check', ok: true, problem: null });
    expect(opened.movedAside).toBeNull();
    expect(new ResultStore(opened.db).latestForGpu(gpuIdentity().uuid)?.document.elements.l1?.size?.value).toBe(20);
    opened.db.close();
  });

  it('moves a file with garbage pages aside, starts fresh, and salvages the rows it can read', () => {
    const dir = tempDir();
    const file = path.join(dir, 'topod.sqlite');
    populated(file, 200);
    // A few KiB of garbage in the middle of the file, as in the issue.
    overwrite(file, 4096 * 100, Buffer.alloc(8192, 0x41));
    const opened = openStore(file, { now: () => NOW });
    expect(opened.movedAside?.file).toBe(`${file}.damaged-2026-05-01T102030Z`);
    expect(opened.movedAside?.reason).toMatch(/malformed|integrity_check failed/);
    expect(existsSync(opened.movedAside?.file as string)).toBe(true);
    const salvage = opened.movedAside?.salvage;
    expect(salvage?.gpus).toBe(1);
    // Rows on the two overwritten pages are lost; the rest is read around them.
    expect(salvage?.results).toBeGreaterThan(150);
    expect(salvage?.results).toBeLessThan(200);
    expect(salvage?.skipped).toBeGreaterThan(0);
    // The fresh file passes its own check and serves the newest salvaged result.
    expect(opened.db.pragma('integrity_check', { simple: true })).toBe('ok');
    const latest = new ResultStore(opened.db).latestForGpu(gpuIdentity().uuid);
    expect(latest).not.toBeNull();
    expect(new ResultStore(opened.db).rawSeries(latest?.id as number)).toHaveLength(1);
    opened.db.close();
  });

  it('rebuilds a header overwritten with garbage and recovers every row behind it (issue 22: "nothing could be recovered")', () => {
    const dir = tempDir();
    const file = path.join(dir, 'topod.sqlite');
    populated(file, 30);
    overwrite(file, 0, Buffer.alloc(100, 0x41));
    const opened = openStore(file, { now: () => NOW });
    expect(opened.movedAside).toMatchObject({ reason: 'file is not a database', salvageError: null });
    expect(asideFiles(dir)).toEqual(['topod.sqlite.damaged-2026-05-01T102030Z']);
    const salvage = opened.movedAside?.salvage;
    expect(salvage?.method).toBe('header rebuilt (page size 4096)');
    expect(salvage?.tables).toEqual({
      gpus: { recovered: 1, skipped: 0 },
      probe_results: { recovered: 30, skipped: 0 },
      raw_series: { recovered: 30, skipped: 0 },
      probe_jobs: { recovered: 30, skipped: 0 },
    });
    expect(new ResultStore(opened.db).latestForGpu(gpuIdentity().uuid)?.document.elements.l1?.size?.value).toBe(30);
    expect(new JobStore(opened.db).list({ gpu: gpuIdentity().uuid, limit: 100 })).toHaveLength(30);
    // The rebuilt copy was a scratch file: only the damaged original stays beside the fresh database.
    expect(readdirSync(dir).filter((f) => f.includes('header-rebuilt'))).toEqual([]);
    opened.db.close();
  });

  it('recovers the rows still on disk from a file truncated to half', () => {
    const file = path.join(tempDir(), 'topod.sqlite');
    populated(file, 200);
    truncateSync(file, Math.floor(statSync(file).size / 2));
    const salvage = openStore(file, { now: () => NOW }).movedAside?.salvage;
    expect(salvage?.gpus).toBe(1);
    // Roughly the first half of the results lie in the first half of the file.
    expect(salvage?.results).toBeGreaterThan(50);
    expect(salvage?.results).toBeLessThan(200);
    expect(salvage?.tables['probe_results']?.skipped).toBeGreaterThan(0);
  });

  it('keeps the job history when 16 KiB of garbage hit the middle of the file', () => {
    const file = path.join(tempDir(), 'topod.sqlite');
    populated(file, 200);
    overwrite(file, Math.floor(statSync(file).size / 2 / 4096) * 4096, Buffer.alloc(16384, 0x5a));
    const opened = openStore(file, { now: () => NOW });
    const salvage = opened.movedAside?.salvage;
    expect(salvage?.results).toBeGreaterThan(150);
    expect(salvage?.jobs).toBeGreaterThan(150);
    const jobs = new JobStore(opened.db).list({ gpu: gpuIdentity().uuid, limit: 500 });
    expect(jobs.length).toBe(salvage?.jobs);
    // A job keeps its link to its result when that result was recovered, and only then.
    const results = new ResultStore(opened.db);
    for (const job of jobs) if (job.resultId !== null) expect(results.get(job.resultId)).not.toBeNull();
    opened.db.close();
  });

  it("moves another program's SQLite file aside instead of migrating it", () => {
    const dir = tempDir();
    const file = path.join(dir, 'topod.sqlite');
    const foreign = new Database(file);
    foreign.exec("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT); INSERT INTO moz_places (url) VALUES ('x')");
    foreign.close();
    const opened = openStore(file, { now: () => NOW });
    expect(opened.movedAside?.reason).toMatch(/not a topod database \(its tables: moz_places\)/);
    const kept = new Database(opened.movedAside?.file as string, { readonly: true });
    expect(kept.prepare('SELECT url FROM moz_places').get()).toEqual({ url: 'x' });
    kept.close();
    opened.db.close();
  });

  it('finds index damage that quick_check does not (integrity_check cross-checks indexes)', () => {
    const dir = tempDir();
    const file = path.join(dir, 'topod.sqlite');
    populated(file, 5, 0);
    // One row's driver version changed in the table page behind its index's back (same length, page still well formed).
    const db = new Database(file, { readonly: true });
    const root = (db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'probe_results'").get() as { rootpage: number }).rootpage;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    db.close();
    const page = Buffer.alloc(pageSize);
    const fd = openSync(file, 'r+');
    readSync(fd, page, 0, pageSize, (root - 1) * pageSize);
    const at = page.indexOf('580.1');
    expect(at).toBeGreaterThan(0);
    page.write('580.2', at);
    writeSync(fd, page, 0, pageSize, (root - 1) * pageSize);
    closeSync(fd);
    const check = new Database(file, { readonly: true });
    expect(check.pragma('quick_check', { simple: true })).toBe('ok');
    expect(check.pragma('integrity_check', { simple: true })).toMatch(/missing from index/);
    check.close();
    const opened = openStore(file, { now: () => NOW });
    expect(opened.boot).toMatchObject({ check: 'integrity_check', ok: false, problem: expect.stringMatching(/missing from index/) });
    expect(opened.movedAside?.salvage).toMatchObject({ gpus: 1, results: 5, rawSeries: 5, skipped: 0 });
    opened.db.close();
  });

  it('says in one line which folder cannot be created and what to do', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'data'), 'a file where the folder should be');
    const attempt = () => openStore(path.join(dir, 'data', 'topod.sqlite'));
    expect(attempt).toThrow(StartupError);
    expect(attempt).toThrow(
      new RegExp(`^cannot create the database folder ${path.join(dir, 'data')} \\((EEXIST|ENOTDIR)\\): a file is in the way`),
    );
  });

  it('says so when the database path is a folder', () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'topod.sqlite'));
    expect(() => openStore(path.join(dir, 'topod.sqlite'))).toThrow(/is a folder: point TOPOD_DB \(--db\) at a file in it/);
  });

  it('opens :memory: without checks', () => {
    const opened = openStore(':memory:');
    expect(opened.boot.check).toBe('none');
    opened.db.close();
  });
});
