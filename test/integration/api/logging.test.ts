import { afterEach, describe, expect, it } from 'vitest';
import { TEST_TOKEN, buildTestApp, type TestApp } from './harness.js';

describe('request logging', () => {
  let t: TestApp | undefined;
  afterEach(() => t?.app.close());

  it('logs requests as JSON with the Authorization header redacted', async () => {
    t = await buildTestApp({ adminToken: TEST_TOKEN, captureLogs: true });
    const accepted = await t.app.inject({ method: 'POST', url: '/v1/gpus/0/probe', headers: { authorization: `Bearer ${TEST_TOKEN}` } });
    const refused = await t.app.inject({
      method: 'POST',
      url: '/v1/gpus/0/probe',
      headers: { authorization: `Bearer ${TEST_TOKEN}-wrong`, cookie: 'session=s3cr3t' },
    });
    expect([accepted.statusCode, refused.statusCode]).toEqual([202, 401]);

    const entries = t.logs.map((line) => JSON.parse(line));
    const incoming = entries.filter((entry) => entry.msg === 'incoming request');
    expect(incoming).toHaveLength(2);
    expect(incoming[0].req).toMatchObject({ method: 'POST', url: '/v1/gpus/0/probe', headers: { authorization: '[Redacted]' } });
    expect(entries.filter((entry) => entry.msg === 'request completed').map((entry) => entry.res.statusCode)).toEqual([202, 401]);
    expect(entries.find((entry) => entry.level === 40 && entry.code === 'TOPOD_ERR_UNAUTHORIZED')).toMatchObject({
      remoteAddress: '127.0.0.1',
    });
    const all = t.logs.join('\n');
    expect(all).not.toContain(TEST_TOKEN);
    expect(all).not.toContain('s3cr3t');
  });
});
