/**
 * The port is bound before boot lists the GPUs (server/main.ts): until then a
 * GPU route answers 503 with Retry-After, never a 404 for a GPU that exists or
 * an empty list. What does not name a GPU answers as always.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeGpu } from './fake-topology.js';
import { PROBLEM_TYPE, buildTestApp, type TestApp } from './harness.js';

describe('while boot has not listed the GPUs', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
    t.topology.gpus = [makeGpu({ index: 0 })];
    t.topology.gpusEnumerated = false;
  });
  afterEach(() => t.app.close());

  it.each(['/v1/gpus', '/v1/gpus/0', '/v1/gpus/7', '/v1/gpus/0/topology', '/v1/gpus/0/topology?format=mt4g'])(
    'GET %s answers 503 not-ready with Retry-After',
    async (url) => {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(503);
      expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.json()).toMatchObject({ code: 'TOPOD_ERR_NOT_READY', detail: expect.stringMatching(/has not listed its GPUs yet/) });
    },
  );

  it('answers what names no GPU as always', async () => {
    for (const url of ['/healthz', '/v1/jobs', '/openapi.json'])
      expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
  });

  it('serves the GPUs once they are listed', async () => {
    t.topology.gpusEnumerated = true;
    expect((await t.app.inject({ method: 'GET', url: '/v1/gpus/0' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/v1/gpus/7' })).statusCode).toBe(404);
  });
});
