import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeGpu } from './fake-topology.js';
import { PROBLEM_TYPE, buildTestApp, type TestApp } from './harness.js';

describe('GET /v1/gpus', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
    t.topology.gpus = [
      makeGpu({ index: 0, migDeviceUuids: ['MIG-11111111-2222-3333-4444-555555555555'] }),
      makeGpu({ index: 1, present: false }),
    ];
  });
  afterEach(() => t.app.close());

  it('lists every GPU in a { gpus } envelope', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/gpus' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ gpus: t.topology.gpus });
  });

  it.each([
    ['an index', '1', 1],
    ['a GPU UUID', makeGpu({ index: 1 }).uuid, 1],
    ['a MIG device UUID', 'MIG-11111111-2222-3333-4444-555555555555', 0],
  ])('finds one GPU by %s', async (_label, id, index) => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/gpus/${id}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ index });
  });

  it('answers 404 problem+json for an unknown GPU', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/gpus/7' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
    expect(res.json()).toMatchObject({
      type: 'urn:topod:problem:not-found',
      title: 'Not Found',
      status: 404,
      code: 'TOPOD_ERR_NOT_FOUND',
      instance: '/v1/gpus/7',
    });
    expect(res.json().detail).toContain('"7"');
  });
});
