import { afterEach, describe, expect, it } from 'vitest';
import { PROBLEM_TYPE, TEST_TOKEN, buildTestApp, type TestApp } from './harness.js';

describe('POST /v1/gpus/{id}/reanalyse', () => {
  let t: TestApp | undefined;
  afterEach(() => t?.app.close());

  it('answers the rebuilt result and where it is served', async () => {
    t = await buildTestApp();
    const { app, topology } = t;
    const gpu = topology.gpus[0];
    topology.reanalyseOutcome = (g) => ({
      kind: 'reanalysed',
      gpuUuid: g.uuid,
      resultId: 8,
      analysisVersion: 'cpd-ks-4',
      reanalysedFrom: { resultId: 5, analysisVersion: 'cpd-ks-3' },
    });
    const res = await app.inject({ method: 'POST', url: '/v1/gpus/0/reanalyse', remoteAddress: '127.0.0.1' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      gpuUuid: gpu?.uuid,
      resultId: 8,
      analysisVersion: 'cpd-ks-4',
      reanalysedFrom: { resultId: 5, analysisVersion: 'cpd-ks-3' },
      topologyUrl: `/v1/gpus/${gpu?.uuid}/topology`,
    });
    expect(topology.reanalyseRequests).toEqual(['0']);
  });

  it.each([
    ['an unknown GPU', '/v1/gpus/9/reanalyse', 404, 'TOPOD_ERR_NOT_FOUND'],
    ['a GPU without a stored result', '/v1/gpus/0/reanalyse', 409, 'TOPOD_ERR_CONFLICT'],
  ])('answers problem+json for %s', async (_label, url, status, code) => {
    t = await buildTestApp();
    const res = await t.app.inject({ method: 'POST', url, remoteAddress: '127.0.0.1' });
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
    expect(res.json().code).toBe(code);
  });

  it('answers 503 without an analysis, and needs the admin token like a probe', async () => {
    t = await buildTestApp({ adminToken: TEST_TOKEN });
    t.topology.reanalyseOutcome = () => ({ kind: 'no-backend', reason: 'no GPU here' });
    const denied = await t.app.inject({ method: 'POST', url: '/v1/gpus/0/reanalyse', remoteAddress: '127.0.0.1' });
    expect(denied.statusCode).toBe(401);
    expect(t.topology.reanalyseRequests).toHaveLength(0);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/gpus/0/reanalyse',
      remoteAddress: '127.0.0.1',
      headers: { authorization: `Bearer ${TEST_TOKEN}` },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json().detail).toContain('no GPU here');
  });
});
