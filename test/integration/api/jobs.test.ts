import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_JOB_LIMIT } from '../../../server/api/schemas/job.js';
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
      makeJob({ id: 'c', gpuUuid: makeGpu({ index: 1 }).uuid, state: 'failed', error: { code: 'TOPOD_ERR_PROBE_TIMEOUT', message: 'timed out' } }),
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
});
