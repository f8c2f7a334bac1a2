import { afterEach, describe, expect, it } from 'vitest';
import { MEASURABLE_ELEMENTS, PROBE_TARGETS } from '../../../server/discovery/registry.js';
import { ELEMENT_NAMES } from '../../../server/model/document.js';
import { makeJob } from './fake-topology.js';
import { PROBLEM_TYPE, TEST_TOKEN, buildTestApp, type TestApp, type TestAppOptions } from './harness.js';

const URL = '/v1/gpus/0/probe';
/** A document element no strategy measures: texture, until a texture strategy is registered (it answered 202 before the registry). */
const UNMEASURED = ELEMENT_NAMES.find((element) => !MEASURABLE_ELEMENTS.includes(element))!;
const LOOPBACK = '127.0.0.1';
const REMOTE = '10.1.2.3';

describe('POST /v1/gpus/{id}/probe', () => {
  let t: TestApp | undefined;
  const start = async (options: TestAppOptions = {}): Promise<TestApp> => (t = await buildTestApp(options));
  afterEach(() => t?.app.close());

  describe('with an admin token configured', () => {
    it('queues with the right bearer token: 202, Location, the job', async () => {
      const { app, topology } = await start({ adminToken: TEST_TOKEN });
      const res = await app.inject({ method: 'POST', url: URL, remoteAddress: REMOTE, headers: { authorization: `Bearer ${TEST_TOKEN}` } });
      expect(res.statusCode).toBe(202);
      const job = res.json();
      expect(res.headers.location).toBe(`/v1/jobs/${job.id}`);
      expect(job).toEqual(topology.jobs[0]);
      expect(topology.probeRequests[0]).toEqual({
        id: '0',
        options: { only: null, force: false, evenIfBusy: false, requestedBy: `api:${REMOTE}` },
      });
    });

    it.each([
      ['no Authorization header', undefined, 'Bearer realm="topod"'],
      ['a wrong token', `Bearer ${TEST_TOKEN}x`, 'Bearer realm="topod", error="invalid_token"'],
      ['another scheme', `Basic ${Buffer.from(`admin:${TEST_TOKEN}`).toString('base64')}`, 'Bearer realm="topod"'],
    ])('answers 401 with WWW-Authenticate for %s, even from loopback', async (_label, authorization, challenge) => {
      const { app, topology } = await start({ adminToken: TEST_TOKEN });
      const headers = authorization === undefined ? {} : { authorization };
      const res = await app.inject({ method: 'POST', url: URL, remoteAddress: LOOPBACK, headers });
      expect(res.statusCode).toBe(401);
      expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
      expect(res.headers['www-authenticate']).toBe(challenge);
      expect(res.json().code).toBe('TOPOD_ERR_UNAUTHORIZED');
      expect(topology.probeRequests).toHaveLength(0);
    });
  });

  it('checks credentials before reading the body', async () => {
    const { app } = await start({ adminToken: TEST_TOKEN });
    const res = await app.inject({
      method: 'POST',
      url: URL,
      remoteAddress: REMOTE,
      headers: { 'content-type': 'application/json' },
      payload: '{"only": ["l9"]',
    });
    expect(res.statusCode).toBe(401);
  });

  describe('without an admin token', () => {
    it.each([LOOPBACK, '127.8.9.10', '::1', '::ffff:127.0.0.1'])('accepts loopback client %s', async (remoteAddress) => {
      const { app } = await start();
      const res = await app.inject({ method: 'POST', url: URL, remoteAddress });
      expect(res.statusCode).toBe(202);
    });

    it.each([REMOTE, '::ffff:10.0.0.1', 'fe80::1'])(
      'refuses remote client %s with 403 saying how to configure a token',
      async (remoteAddress) => {
        const { app, topology } = await start();
        const res = await app.inject({ method: 'POST', url: URL, remoteAddress });
        expect(res.statusCode).toBe(403);
        expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
        expect(res.json()).toMatchObject({ code: 'TOPOD_ERR_FORBIDDEN', type: 'urn:topod:problem:forbidden' });
        expect(res.json().detail).toContain('TOPOD_ADMIN_TOKEN');
        expect(topology.probeRequests).toHaveLength(0);
      },
    );
  });

  describe('body', () => {
    const post = async (payload: string, contentType = 'application/json', options: TestAppOptions = {}) => {
      const { app } = await start(options);
      return app.inject({ method: 'POST', url: URL, remoteAddress: LOOPBACK, headers: { 'content-type': contentType }, payload });
    };

    it('passes only and force to the service', async () => {
      const res = await post(JSON.stringify({ only: ['l2', 'deviceMemory'], force: true, evenIfBusy: true }));
      expect(res.statusCode).toBe(202);
      expect(t?.topology.probeRequests[0]?.options).toMatchObject({ only: ['l2', 'deviceMemory'], force: true, evenIfBusy: true });
    });

    it.each([
      ['an unknown element', { only: ['l9'] }, '/only/0'],
      ['an unknown field', { forse: true }, '/'],
      ['an empty only list', { only: [] }, '/only'],
      ['a non-boolean force', { force: 'yes' }, '/force'],
    ])('answers 400 for %s', async (_label, body, pointer) => {
      const res = await post(JSON.stringify(body));
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
      expect(res.json().code).toBe('TOPOD_ERR_VALIDATION');
      expect(res.json().errors).toEqual(expect.arrayContaining([expect.objectContaining({ in: 'body', pointer })]));
      expect(t?.topology.probeRequests).toHaveLength(0);
    });

    it.each([
      ['a known element no strategy measures', UNMEASURED],
      ['an unknown element', 'l9'],
    ])('answers 400 naming the measurable elements for %s (%s) in only', async (_label, element) => {
      const res = await post(JSON.stringify({ only: [element] }));
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
      const problem = res.json();
      expect(problem).toMatchObject({ code: 'TOPOD_ERR_VALIDATION', status: 400 });
      expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ in: 'body', pointer: '/only/0' })]));
      expect(problem.detail).toBe(`body/only/0 is not an element a probe can measure: use one of ${PROBE_TARGETS.join(', ')}`);
      for (const measurable of PROBE_TARGETS) expect(problem.detail).toContain(measurable);
      expect(t?.topology.probeRequests).toHaveLength(0);
    });

    it('accepts every measurable element and opt-in family (traffic) in only', async () => {
      const res = await post(JSON.stringify({ only: [...PROBE_TARGETS] }));
      expect(res.statusCode).toBe(202);
      expect(t?.topology.probeRequests[0]?.options.only).toEqual([...PROBE_TARGETS]);
      expect(PROBE_TARGETS).toContain('traffic');
    });

    it('answers 400 for malformed JSON', async () => {
      const res = await post('{"only": [');
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'TOPOD_ERR_MALFORMED_BODY', type: 'urn:topod:problem:malformed-body' });
    });

    it('answers 415 for a non-JSON body', async () => {
      const res = await post('only=l2', 'text/plain');
      expect(res.statusCode).toBe(415);
      expect(res.json().code).toBe('TOPOD_ERR_UNSUPPORTED_MEDIA_TYPE');
    });

    it('answers 413 past the configured body limit', async () => {
      const res = await post(JSON.stringify({ only: ['l2'], padding: 'x'.repeat(256) }), 'application/json', { bodyLimitBytes: 128 });
      expect(res.statusCode).toBe(413);
      expect(res.json().code).toBe('TOPOD_ERR_BODY_TOO_LARGE');
    });
  });

  describe('outcomes', () => {
    it('answers 409 with the running job when a probe is already active', async () => {
      const { app, topology } = await start();
      const running = makeJob({ id: 'job-running', state: 'running' });
      topology.probeOutcome = () => ({ kind: 'conflict', job: running });
      const res = await app.inject({ method: 'POST', url: URL, remoteAddress: LOOPBACK });
      expect(res.statusCode).toBe(409);
      expect(res.headers.link).toBe('</v1/jobs/job-running>; rel="monitor"');
      expect(res.json()).toMatchObject({ code: 'TOPOD_ERR_CONFLICT', jobUrl: '/v1/jobs/job-running', job: { id: 'job-running' } });
    });

    it('answers 404 for an unknown GPU', async () => {
      const { app } = await start();
      const res = await app.inject({ method: 'POST', url: '/v1/gpus/42/probe', remoteAddress: LOOPBACK });
      expect(res.statusCode).toBe(404);
    });

    it('answers 503 when there is no measurement backend', async () => {
      const { app, topology } = await start();
      topology.probeOutcome = () => ({ kind: 'no-backend', reason: 'no GPU runtime on this host' });
      const res = await app.inject({ method: 'POST', url: URL, remoteAddress: LOOPBACK });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ code: 'TOPOD_ERR_NO_BACKEND', detail: 'no GPU runtime on this host' });
    });
  });
});
