import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeGpu, makeJob } from './fake-topology.js';
import { PROBLEM_TYPE, buildTestApp, type TestApp } from './harness.js';
import type { PreparedDocument } from '../../../server/model/topology-api.js';

// Deliberately not in JSON.stringify's canonical form: proves the body is sent as-is.
const BODY = '{ "schemaVersion": 1,\n  "gpu": {"uuid": "x", "name": "y"}, "elements": {} }';
const ETAG = '"v1-abc"';

describe('GET /v1/gpus/{id}/topology', () => {
  let t: TestApp;
  const uuid = makeGpu().uuid;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(() => t.app.close());

  describe('when ready', () => {
    beforeEach(() => {
      t.topology.topologies.set(uuid, {
        kind: 'ready',
        document: { value: JSON.parse(BODY) as PreparedDocument['value'], body: BODY, etag: ETAG },
      });
    });

    it('sends the prepared body byte for byte with ETag and Cache-Control: no-cache', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/topology' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(BODY);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers.etag).toBe(ETAG);
      expect(res.headers['cache-control']).toBe('no-cache');
    });

    it.each([
      ['the exact tag', ETAG],
      ['a list holding it', '"old", "v1-abc" , "other"'],
      ['its weak form', 'W/"v1-abc"'],
      ['*', '*'],
    ])('answers 304 with no body for If-None-Match: %s', async (_label, header) => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/topology', headers: { 'if-none-match': header } });
      expect(res.statusCode).toBe(304);
      expect(res.body).toBe('');
      expect(res.headers.etag).toBe(ETAG);
    });

    it('answers 200 when If-None-Match names only other tags', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/topology', headers: { 'if-none-match': '"old", W/"older"' } });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(BODY);
    });

    it('answers HEAD with the headers and no body', async () => {
      const res = await t.app.inject({ method: 'HEAD', url: '/v1/gpus/0/topology' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe('');
      expect(res.headers.etag).toBe(ETAG);
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(BODY));
    });

    it('quotes a bare tag from the service', async () => {
      t.topology.topologies.set(uuid, {
        kind: 'ready',
        document: { value: JSON.parse(BODY) as PreparedDocument['value'], body: BODY, etag: 'bare' },
      });
      const res = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/topology' });
      expect(res.headers.etag).toBe('"bare"');
    });
  });

  it('answers 503 with Retry-After and the job URL while a probe is pending', async () => {
    const job = makeJob({ id: 'job-pending', state: 'running', gpuUuid: uuid });
    t.topology.topologies.set(uuid, { kind: 'pending', job });
    const res = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/topology' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.headers.link).toBe('</v1/jobs/job-pending>; rel="monitor"');
    expect(res.headers.etag).toBeUndefined();
    expect(res.json()).toMatchObject({
      code: 'TOPOD_ERR_TOPOLOGY_PENDING',
      status: 503,
      jobUrl: '/v1/jobs/job-pending',
      job: { id: 'job-pending' },
    });
  });

  it('answers 503 with the reason when the topology cannot be had', async () => {
    t.topology.topologies.set(uuid, { kind: 'unavailable', reason: 'no measurement backend: probe binary missing' });
    const res = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/topology' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'TOPOD_ERR_TOPOLOGY_UNAVAILABLE', detail: 'no measurement backend: probe binary missing' });
    expect(res.headers['retry-after']).toBeUndefined();
  });

  it('answers 404 for an unknown GPU', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/gpus/GPU-nope/topology' });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('TOPOD_ERR_NOT_FOUND');
  });
});
