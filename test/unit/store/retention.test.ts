/**
 * Retention (before: nothing was ever deleted; 300 forced probes left 313
 * jobs, 13 results and 906 raw series). Keeps the newest N results per GPU
 * with their raw series, the newest of every driver/probe key, the sources
 * of kept re-analyses and quarantined rows; deletes finished jobs by age.
 */
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../server/store/database.js';
import { GpuStore } from '../../../server/store/gpus.js';
import { JobStore } from '../../../server/store/jobs.js';
import { ResultStore, type NewResult } from '../../../server/store/results.js';
import { Retention } from '../../../server/store/retention.js';
import type { ResultDocument } from '../../../server/model/document.js';
import { gpuIdentity } from '../../helpers/fakes.js';

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
    raw: [{ name: 'l1.size.sweep', op: 'pchase', args: {}, result: {} }, { name: 'l2.size.sweep', op: 'pchase', args: {}, result: {} }],
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
    expect(pruned).toEqual({ results: 2, rawSeries: 4, jobs: 0 });
    // Two series for each of the six results kept for A (the re-analysis copied its source's), two for each of B's.
    expect(rawCount(db)).toBe(2 * 6 + 2 * 2);
    expect(jobs.get(job.id)).toMatchObject({ state: 'succeeded', resultId: null });
    expect(db.pragma('foreign_key_check')).toEqual([]);
    expect(new Retention(db, { keepResults: 3, jobMaxAgeMs: 86_400_000 }).pruneAll()).toEqual({ results: 0, rawSeries: 0, jobs: 0 });
  });

  it('deletes finished jobs older than the age, never active ones', () => {
    const { db, jobs } = setup();
    const old = jobs.create({ gpuUuid: gpuA.uuid, reason: 'r', requestedBy: 't', only: null, force: false }, '2020-01-01T00:00:00.000Z');
    jobs.finish(old.id, { state: 'failed', error: { code: 'X', message: 'y' } }, '2020-01-01T00:00:01.000Z');
    const recent = jobs.create({ gpuUuid: gpuB.uuid, reason: 'r', requestedBy: 't', only: null, force: false });
    jobs.finish(recent.id, { state: 'cancelled', error: { code: 'X', message: 'y' } });
    const active = jobs.create({ gpuUuid: gpuA.uuid, reason: 'r', requestedBy: 't', only: null, force: false }, '2020-01-01T00:00:00.000Z');
    expect(new Retention(db, { keepResults: 3, jobMaxAgeMs: 86_400_000 }).pruneAll()).toMatchObject({ jobs: 1 });
    expect(jobs.list({}).map((j) => j.id).sort()).toEqual([recent.id, active.id].sort());
  });
});
