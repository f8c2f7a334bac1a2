/**
 * Retention (before: nothing was ever deleted; 300 forced probes left 313
 * jobs, 13 results and 906 raw series). Keeps the newest N results per GPU
 * with their raw series, the newest of every driver/probe key, the sources
 * of kept re-analyses and quarantined rows; deletes finished jobs by age.
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../../server/store/database.js';
import { GpuStore } from '../../../server/store/gpus.js';
import { JobStore } from '../../../server/store/jobs.js';
import { ResultStore, type NewResult } from '../../../server/store/results.js';
import { Retention } from '../../../server/store/retention.js';
import type { ResultDocument } from '../../../server/model/document.js';
import { gpuIdentity } from '../../helpers/fakes.js';
import { useTempDir } from '../../helpers/temp-dir.js';

const gpuA = gpuIdentity();
const gpuB = gpuIdentity({ uuid: 'GPU-bbbbbbbb-2222-3333-4444-555555555555', index: 1 });

function result(gpuUuid: string, driverVersion = '580.1', extra: Partial<NewResult> = {}): NewResult {
  return {
    gpuUuid,
    driverVersion,
    probeVersion: 'p1',
    analysisVersion: 'a1',
    configuration: {},
    createdAt: new Date().toISOString(),
    durationMs: 1,
    simulated: true,
    jobId: null,
    document: { schemaVersion: 2, elements: {}, probe: {}, device: {} } as unknown as ResultDocument,
    raw: [
      { name: 'l1.size.sweep', op: 'pchase', args: {}, result: {} },
      { name: 'l2.size.sweep', op: 'pchase', args: {}, result: {} },
    ],
    ...extra,
  };
}

function setup() {
  const db = openDatabase(':memory:');
  const gpus = new GpuStore(db);
  gpus.seen(gpuA);
  gpus.seen(gpuB);
  return { db, results: new ResultStore(db), jobs: new JobStore(db) };
}

const ids = (db: ReturnType<typeof openDatabase>, gpu: string) =>
  (db.prepare('SELECT id FROM probe_results WHERE gpu_uuid = ? ORDER BY id').all(gpu) as Array<{ id: number }>).map((r) => r.id);
const rawCount = (db: ReturnType<typeof openDatabase>) => (db.prepare('SELECT COUNT(*) AS n FROM raw_series').get() as { n: number }).n;

describe('Retention', () => {
  it('keeps the newest N results per GPU with their raw series, the newest of each driver, and reanalysis sources', () => {
    const { db, results, jobs } = setup();
    const oldDriver = results.insert(result(gpuA.uuid, '570.1'));
    const a = Array.from({ length: 6 }, () => results.insert(result(gpuA.uuid)));
    // A job that produced an old result keeps its row (its resultId cleared).
    const job = jobs.create({ gpuUuid: gpuA.uuid, reason: 'test', requestedBy: 'test', only: null, force: false });
    jobs.finish(job.id, { state: 'succeeded', resultId: a[0] as number });
    const source = a[1] as number;
    const rebuilt = results.insert({ ...result(gpuA.uuid), raw: [], reanalysedFrom: source });
    const b = Array.from({ length: 2 }, () => results.insert(result(gpuB.uuid)));
    db.prepare('UPDATE probe_results SET quarantined = ? WHERE id = ?').run('test', a[2]);

    const pruned = new Retention(db, { keepResults: 3, jobMaxAgeMs: 86_400_000 }).pruneAll();
    // Newest 3 of A: rebuilt, a[5], a[4]; plus 570.1's only result, the source of `rebuilt`, and the quarantined a[2].
    expect(ids(db, gpuA.uuid)).toEqual([oldDriver, a[1], a[2], a[4], a[5], rebuilt]);
    expect(ids(db, gpuB.uuid)).toEqual(b);
    expect(pruned).toMatchObject({ results: 2, rawSeries: 4, jobs: 0 });
    // Two series for each of the six results kept for A (the re-analysis copied its source's), two for each of B's.
    expect(rawCount(db)).toBe(2 * 6 + 2 * 2);
    expect(jobs.get(job.id)).toMatchObject({ state: 'succeeded', resultId: null });
    expect(db.pragma('foreign_key_check')).toEqual([]);
    expect(new Retention(db, { keepResults: 3, jobMaxAgeMs: 86_400_000 }).pruneAll()).toEqual({
      results: 0,
      rawSeries: 0,
      jobs: 0,
      freedPages: 0,
    });
  });

  it('deletes finished jobs older than the age, never active ones', () => {
    const { db, jobs } = setup();
    const old = jobs.create({ gpuUuid: gpuA.uuid, reason: 'r', requestedBy: 't', only: null, force: false }, '2020-01-01T00:00:00.000Z');
    jobs.finish(old.id, { state: 'failed', error: { code: 'X', message: 'y' } }, '2020-01-01T00:00:01.000Z');
    const recent = jobs.create({ gpuUuid: gpuB.uuid, reason: 'r', requestedBy: 't', only: null, force: false });
    jobs.finish(recent.id, { state: 'cancelled', error: { code: 'X', message: 'y' } });
    const active = jobs.create({ gpuUuid: gpuA.uuid, reason: 'r', requestedBy: 't', only: null, force: false }, '2020-01-01T00:00:00.000Z');
    expect(new Retention(db, { keepResults: 3, jobMaxAgeMs: 86_400_000 }).pruneAll()).toMatchObject({ jobs: 1 });
    expect(
      jobs
        .list({})
        .map((j) => j.id)
        .sort(),
    ).toEqual([recent.id, active.id].sort());
  });

  describe('the file follows what is kept (issue 22: 127 MB for 11 results, 86 % free pages)', () => {
    const tempDir = useTempDir();
    const fileBytes = (file: string) => statSync(file).size + (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
    /** A result with ~100 KiB of raw series that gzip cannot shrink. */
    const bulky = () =>
      result(gpuA.uuid, '580.1', {
        raw: [{ name: 'l1.size.sweep', op: 'pchase', args: {}, result: { noise: randomBytes(100 * 1024).toString('base64') } }],
      });

    it('gives the pages of pruned results back to the file system', () => {
      const file = path.join(tempDir(), 'topod.sqlite');
      const db = openDatabase(file);
      new GpuStore(db).seen(gpuA);
      const results = new ResultStore(db);
      for (let i = 0; i < 30; i++) results.insert(bulky());
      db.pragma('wal_checkpoint(TRUNCATE)');
      const full = fileBytes(file);
      const pruned = new Retention(db, { keepResults: 3, jobMaxAgeMs: 86_400_000 }).pruneGpu(gpuA.uuid);
      expect(pruned).toMatchObject({ results: 27 });
      expect(pruned.freedPages).toBeGreaterThan(0);
      expect(db.pragma('freelist_count', { simple: true })).toBe(0);
      // 3 of 30 results kept: the file holds about a tenth of what it held, not its high-water mark.
      expect(fileBytes(file)).toBeLessThan(full / 4);
      db.close();
    });

    it('converts a database made without incremental vacuum, keeping its rows', () => {
      const file = path.join(tempDir(), 'topod.sqlite');
      const legacy = new Database(file);
      legacy.pragma('auto_vacuum = NONE');
      migrate(legacy);
      legacy
        .prepare(
          "INSERT INTO gpus (uuid, name, vendor, last_index, first_seen_at, last_seen_at) VALUES ('GPU-x', 'x', 'nvidia', 0, 't', 't')",
        )
        .run();
      legacy.close();
      const db = openDatabase(file);
      expect(db.pragma('auto_vacuum', { simple: true })).toBe(2);
      expect(db.prepare('SELECT uuid FROM gpus').pluck().all()).toEqual(['GPU-x']);
      db.close();
      const fresh = openDatabase(path.join(tempDir(), 'new.sqlite'));
      expect(fresh.pragma('auto_vacuum', { simple: true })).toBe(2);
      fresh.close();
    });
  });
});
