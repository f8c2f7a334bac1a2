import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROBLEM_TYPE, buildTestApp, type TestApp } from './harness.js';

describe('health', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(() => t.app.close());

  it('GET /healthz is 200 even when not ready', async () => {
    t.topology.healthState = { ready: false, checks: { gpus: { ok: false, detail: 'enumerating' } } };
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', version: '0.0.0-test' });
  });

  it('GET /readyz is 200 with the checks when ready', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', checks: t.topology.healthState.checks });
  });

  it('GET /readyz is 503 problem+json naming the failing check', async () => {
    t.topology.healthState = { ready: false, checks: { store: { ok: true, detail: 'open' }, gpus: { ok: false, detail: 'enumerating' } } };
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
    expect(res.json()).toMatchObject({ code: 'TOPOD_ERR_NOT_READY', checks: t.topology.healthState.checks });
    expect(res.json().detail).toContain('gpus: enumerating');
  });
});
