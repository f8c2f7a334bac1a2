import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../server/app.js';
import { encodeJobCursor } from '../../../server/api/job-cursor.js';
import { DEFAULT_JOB_LIMIT } from '../../../server/model/job-schema.js';
import { openDatabase } from '../../../server/store/database.js';
import { GpuStore } from '../../../server/store/gpus.js';
import { JobStore } from '../../../server/store/jobs.js';
import { ResultStore } from '../../../server/store/results.js';
import { ProbePolicy } from '../../../server/topology/probe-policy.js';
import { TopologyService } from '../../../server/topology/service.js';
import { gpuIdentity, silentLogger } from '../../helpers/fakes.js';
import { makeGpu, makeJob } from './fake-topology.js';
import { PROBLEM_TYPE, buildTestApp, type TestApp } from './harness.js';

describe('jobs', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
    t.topology.gpus = [makeGpu({ index: 0 }), makeGpu({ index: 1 })];
    t.topology.jobs = [
      makeJob({ id: 'a', gpuUuid: makeGpu({ index: 0 }).uuid, state: 'succeeded' }),
      makeJob({ id: 'b', gpuUuid: makeGpu({ index: 1 }).uuid, state: 'running' }),
      makeJob({
        id: 'c',
        gpuUuid: makeGpu({ index: 1 }).uuid,
        state: 'failed',
        error: { code: 'TOPOD_ERR_PROBE_TIMEOUT', message: 'timed out' },
      }),
    ];
  });
  afterEach(() => t.app.close());

  it('GET /v1/jobs/{jobId} returns the job', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/jobs/c' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(t.topology.jobs[2]);
  });

  it('GET /v1/jobs/{jobId} answers 404 problem+json for an unknown job', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/jobs/zzz' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
    expect(res.json().code).toBe('TOPOD_ERR_NOT_FOUND');
  });

  it('GET /v1/jobs lists with the default limit', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/jobs' });
    expect(res.statusCode).toBe(200);
    expect(res.json().jobs.map((job: { id: string }) => job.id)).toEqual(['a', 'b', 'c']);
    expect(t.topology.jobQueries.at(-1)).toMatchObject({ limit: DEFAULT_JOB_LIMIT });
  });

  it('GET /v1/jobs passes gpu, state and limit through', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/jobs?gpu=1&state=failed&limit=5' });
    expect(res.statusCode).toBe(200);
    expect(res.json().jobs.map((job: { id: string }) => job.id)).toEqual(['c']);
    expect(t.topology.jobQueries.at(-1)).toEqual({ gpu: '1', state: 'failed', limit: 5 });
  });

  it.each([
    ['an unknown state', 'state=exploded', '/state'],
    ['a zero limit', 'limit=0', '/limit'],
    ['a non-numeric limit', 'limit=many', '/limit'],
  ])('GET /v1/jobs answers 400 for %s', async (_label, query, pointer) => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/jobs?${query}` });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
    expect(res.json()).toMatchObject({ code: 'TOPOD_ERR_VALIDATION', errors: [expect.objectContaining({ in: 'querystring', pointer })] });
  });

  it('GET /v1/jobs answers 404 when the gpu filter names no GPU', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/jobs?gpu=9' });
    expect(res.statusCode).toBe(404);
  });

  it('GET /v1/jobs says there is no next page when everything fit', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/jobs' });
    expect(res.json().next).toBeNull();
    expect(res.headers.link).toBeUndefined();
  });

  it('GET /v1/jobs hands out next with the same filters, and takes it back', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/v1/jobs?gpu=1&limit=1' });
    const next = first.json().next as string;
    expect(next).toMatch(/^\/v1\/jobs\?gpu=1&limit=1&cursor=[A-Za-z0-9_-]+$/);
    expect(first.headers.link).toBe(`<${next}>; rel="next"`);
    const second = await t.app.inject({ method: 'GET', url: next });
    expect(second.json()).toEqual({ jobs: [t.topology.jobs[2]], next: null });
    expect(t.topology.jobPageStarts.at(-1)).toEqual({ createdAt: t.topology.jobs[1]!.createdAt, id: 'b' });
  });

  it.each([
    ['characters outside base64url', 'cursor=abc%2Bdef%3D'],
    ['an empty cursor', 'cursor='],
    ['base64url of something else', `cursor=${Buffer.from('hello').toString('base64url')}`],
    ['a pair with a bad time', `cursor=${Buffer.from(JSON.stringify(['yesterday', 'a'])).toString('base64url')}`],
    ['a pair with an empty id', `cursor=${encodeJobCursor({ createdAt: '2025-01-01T00:00:00.000Z', id: '' })}`],
    ['a cursor with a stray bit', `cursor=${encodeJobCursor({ createdAt: '2025-01-01T00:00:00.000Z', id: 'a' }).slice(0, -1)}`],
  ])('GET /v1/jobs answers 400 problem+json for a malformed cursor: %s', async (_label, query) => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/jobs?${query}` });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
    expect(res.json()).toMatchObject({
      code: 'TOPOD_ERR_VALIDATION',
      errors: [expect.objectContaining({ in: 'querystring', pointer: '/cursor' })],
    });
    expect(t.topology.jobPageStarts).toEqual([]);
  });
});

describe("jobs, paged past 500 on the daemon's own service and store", () => {
  let app: FastifyInstance | undefined;
  afterEach(() => app?.close());

  it('follows next through 1234 jobs: each once, newest first, the last page says null', async () => {
    const db = openDatabase(':memory:');
    const jobs = new JobStore(db);
    const gpu = gpuIdentity();
    new GpuStore(db).seen(gpu);
    db.transaction(() => {
      for (let i = 0; i < 1234; i++) {
        // Two jobs per second: created_at alone does not order them.
        const job = jobs.create(
          { gpuUuid: gpu.uuid, reason: 'requested', requestedBy: 't', only: null, force: false },
          new Date(Date.UTC(2025, 0, 1, 0, 0, Math.floor(i / 2))).toISOString(),
        );
        jobs.finish(job.id, { state: 'failed', error: { code: 'C', message: 'c' } });
      }
    })();
    const policy = new ProbePolicy({ results: new ResultStore(db), probeVersion: null, isOutdated: null });
    const service = new TopologyService({
      jobs,
      scheduler: null,
      policy,
      lifecycle: null,
      store: { check: () => ({ ok: true, detail: 'fake' }) },
      noBackendReason: 'none',
      logger: silentLogger,
    });
    service.syncGpus([gpu], 'boot');
    app = await buildApp({
      config: { adminToken: null, bodyLimitBytes: 16 * 1024 },
      topology: service,
      logger: false,
      version: '0.0.0-test',
    });

    const seen: Array<{ id: string; createdAt: string }> = [];
    let url: string | null = '/v1/jobs?gpu=0&limit=500';
    let pages = 0;
    while (url) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      const body = res.json() as { jobs: Array<{ id: string; createdAt: string }>; next: string | null };
      seen.push(...body.jobs);
      url = body.next;
      pages += 1;
    }
    expect(pages).toBe(3);
    expect(seen).toHaveLength(1234);
    expect(new Set(seen.map((j) => j.id)).size).toBe(1234);
    const order = seen.map((j) => `${j.createdAt} ${j.id}`);
    expect(order).toEqual([...order].sort().reverse());
  });
});
