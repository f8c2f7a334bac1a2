import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../server/store/database.js';
import { GpuStore } from '../../../server/store/gpus.js';
import { INTERRUPTED_CODE, JobStore } from '../../../server/store/jobs.js';
import { ResultStore, type NewResult } from '../../../server/store/results.js';
import type { ResultDocument } from '../../../server/model/document.js';
import { gpuIdentity, resultRow } from '../../helpers/fakes.js';

function setup() {
  const db = openDatabase(':memory:');
  new GpuStore(db).seen(gpuIdentity());
  return { db, results: new ResultStore(db), jobs: new JobStore(db) };
}

function newResult(driverVersion: string, l1: number): NewResult {
  return resultRow(l1, {
    driverVersion,
    document: { schemaVersion: 1, elements: { l1: { size: { value: l1 } } }, probe: {} } as unknown as ResultDocument,
    raw: [{ name: 'sweep', op: 'pchase', args: { n: 1 }, result: { latenciesCycles: [1, 2, 3] } }],
  });
}

describe('ResultStore', () => {
  it('keeps history: a new result never replaces an old one', () => {
    const { results } = setup();
    const first = results.insert(newResult('580.1', 100));
    const second = results.insert(newResult('590.1', 200));
    const key = { gpuUuid: gpuIdentity().uuid, probeVersion: 'p1' };
    expect(results.latestFor({ ...key, driverVersion: '580.1' })?.id).toBe(first);
    expect(results.latestFor({ ...key, driverVersion: '590.1' })?.id).toBe(second);
    expect(results.latestForGpu(gpuIdentity().uuid)?.id).toBe(second);
    expect(results.history(gpuIdentity().uuid).map((h) => h.driverVersion)).toEqual(['590.1', '580.1']);
    expect(results.latestFor({ ...key, driverVersion: 'other' })).toBeNull();
  });

  it('stores raw series compressed and gives them back intact', () => {
    const { db, results } = setup();
    const id = results.insert(newResult('580.1', 100));
    const stored = db.prepare('SELECT encoding, length(data) AS n FROM raw_series WHERE result_id = ?').get(id) as {
      encoding: string;
      n: number;
    };
    expect(stored.encoding).toBe('json+gzip');
    expect(results.rawSeries(id)).toEqual([{ name: 'sweep', op: 'pchase', args: { n: 1 }, result: { latenciesCycles: [1, 2, 3] } }]);
    expect(results.get(id)?.document.probe.resultId).toBe(id);
  });
});

describe('JobStore', () => {
  it('allows one active job per GPU, enforced by the database', () => {
    const { jobs } = setup();
    jobs.create({ gpuUuid: gpuIdentity().uuid, reason: 'r', requestedBy: 'test', only: null, force: false });
    expect(() => jobs.create({ gpuUuid: gpuIdentity().uuid, reason: 'r', requestedBy: 'test', only: null, force: false })).toThrow(
      /UNIQUE/,
    );
  });

  it('walks a job through its states and keeps progress within 0..1', () => {
    const { jobs } = setup();
    const job = jobs.create({ gpuUuid: gpuIdentity().uuid, reason: 'r', requestedBy: 'test', only: ['l1'], force: true });
    expect(job).toMatchObject({ state: 'queued', progress: 0, only: ['l1'], force: true });
    jobs.start(job.id);
    jobs.progress(job.id, 'l1.size', 7);
    expect(jobs.get(job.id)).toMatchObject({ state: 'running', phase: 'l1.size', progress: 1 });
    jobs.finish(job.id, { state: 'failed', error: { code: 'X', message: 'boom' } });
    expect(jobs.get(job.id)).toMatchObject({ state: 'failed', error: { code: 'X', message: 'boom' } });
    expect(jobs.activeFor(job.gpuUuid)).toBeNull();
    jobs.finish(job.id, { state: 'cancelled', error: { code: 'Y', message: 'late' } });
    expect(jobs.get(job.id)?.state).toBe('failed');
  });

  it('marks jobs a crashed process left behind as failed', () => {
    const { jobs } = setup();
    const job = jobs.create({ gpuUuid: gpuIdentity().uuid, reason: 'r', requestedBy: 'test', only: null, force: false });
    jobs.start(job.id);
    const failed = jobs.failInterrupted();
    expect(failed.map((j) => [j.id, j.state, j.error?.code])).toEqual([[job.id, 'failed', INTERRUPTED_CODE]]);
  });

  it('filters by GPU and state, newest first', () => {
    const { jobs } = setup();
    const a = jobs.create({ gpuUuid: gpuIdentity().uuid, reason: 'r', requestedBy: 't', only: null, force: false });
    jobs.finish(a.id, { state: 'cancelled', error: { code: 'C', message: 'c' } });
    const b = jobs.create({ gpuUuid: gpuIdentity().uuid, reason: 'r', requestedBy: 't', only: null, force: false });
    expect(jobs.list({ gpu: gpuIdentity().uuid }).map((j) => j.id)).toEqual([b.id, a.id]);
    expect(jobs.list({ state: 'cancelled' }).map((j) => j.id)).toEqual([a.id]);
    expect(jobs.list({ gpu: 'GPU-other' })).toEqual([]);
  });
});
