/**
 * Inputs a new user tried (issue 22, Low): numbers JavaScript reads but an
 * integer must refuse, a `__proto__` key, a filter value with no hint of the
 * allowed ones, a trailing slash, a re-analysis body with unknown fields.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { JOB_STATES } from '../../../server/model/job.js';
import { DocumentTopology, mergedGpu, recordedH100Result } from '../../helpers/face-documents.js';
import { buildTestApp, PROBLEM_TYPE, type TestApp } from './harness.js';

let t: TestApp | undefined;
afterEach(async () => t?.app.close());

describe('integers are decimal and finite', () => {
  it.each(['Infinity', '1e400', '0x10', '1e1', '10.0', ' 10'])('limit=%s is a 400 problem, not a 500 or 16', async (shape) => {
    t = await buildTestApp();
    const res = await t.app.inject({ method: 'GET', url: `/v1/jobs?limit=${encodeURIComponent(shape)}` });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
    expect(res.json()).toMatchObject({
      code: 'TOPOD_ERR_VALIDATION',
      errors: [{ in: 'querystring', pointer: '/limit', message: expect.stringMatching(/decimal digits/) }],
    });
  });

  it('workingSetBytes=1e400 on a served document is a 400, and a decimal one still answers', async () => {
    t = await buildTestApp({ topology: new DocumentTopology([mergedGpu(recordedH100Result(), 'h100-80gb-mig-mixed.json')]) });
    expect((await t.app.inject({ method: 'GET', url: '/v1/gpus/0/fit?workingSetBytes=1e400' })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: '/v1/gpus/0/fit?workingSetBytes=0x10' })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: '/v1/gpus/0/fit?workingSetBytes=25165824' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/v1/jobs?limit=12' })).statusCode).toBe(200);
  });
});

describe('bodies and messages', () => {
  it('names a refused __proto__ key instead of calling the body invalid JSON', async () => {
    t = await buildTestApp();
    for (const [payload, key] of [
      ['{"__proto__": {"admin": true}}', '__proto__'],
      ['{"only": ["l1"], "x": {"constructor": {"prototype": {}}}}', 'constructor.prototype'],
    ] as const) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/gpus/0/probe', payload, headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'TOPOD_ERR_MALFORMED_BODY', detail: expect.stringContaining(`"${key}" key`) });
    }
    const broken = await t.app.inject({
      method: 'POST',
      url: '/v1/gpus/0/probe',
      payload: '{"only": [',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.json()).toMatchObject({ code: 'TOPOD_ERR_MALFORMED_BODY', detail: 'The request body is not valid JSON.' });
  });

  it('a value outside an enum is answered with the allowed values', async () => {
    t = await buildTestApp();
    const res = await t.app.inject({ method: 'GET', url: '/v1/jobs?state=bogus' });
    expect(res.statusCode).toBe(400);
    const allowed = `must be one of ${JOB_STATES.join(', ')}`;
    expect(res.json()).toMatchObject({ detail: `querystring/state ${allowed}`, errors: [{ pointer: '/state', message: allowed }] });
  });

  it('re-analysis refuses unknown body fields as the probe does, and takes none or {}', async () => {
    t = await buildTestApp();
    const post = (payload?: string) =>
      t!.app.inject({
        method: 'POST',
        url: '/v1/gpus/0/reanalyse',
        ...(payload === undefined ? {} : { payload, headers: { 'content-type': 'application/json' } }),
      });
    const refused = await post('{"forse": true}');
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'TOPOD_ERR_VALIDATION', detail: expect.stringContaining('"forse"') });
    expect((await post()).statusCode).not.toBe(400);
    expect((await post('{}')).statusCode).not.toBe(400);
  });
});

describe('a trailing slash', () => {
  it.each([
    ['/v1/gpus/', 'gpus'],
    ['/v1/jobs/', 'jobs'],
    ['/v1/gpus/0/', 'uuid'],
  ])('%s answers as without it', async (url, key) => {
    t = await buildTestApp();
    const res = await t.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toHaveProperty(key);
  });
});
