import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../server/app.js';
import { FakeTopology } from './fake-topology.js';
import { PROBLEM_TYPE, buildTestApp, type TestApp } from './harness.js';

const SECRET_DETAIL = 'SQLITE_CORRUPT at /var/lib/topod/secret-path.sqlite';

describe('errors are problem+json', () => {
  let t: TestApp | undefined;
  afterEach(() => t?.app.close());

  it('answers 404 for an unknown route', async () => {
    t = await buildTestApp();
    const res = await t.app.inject({ method: 'GET', url: '/v1/nothing-here?x=1' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
    expect(res.json()).toMatchObject({
      type: 'urn:topod:problem:not-found',
      status: 404,
      instance: '/v1/nothing-here',
      code: 'TOPOD_ERR_NOT_FOUND',
    });
    expect(res.json().requestId).toEqual(expect.any(String));
  });

  it('answers 405 with Allow for a known path under another method', async () => {
    t = await buildTestApp();
    const res = await t.app.inject({ method: 'DELETE', url: '/v1/gpus/0/probe' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.json().code).toBe('TOPOD_ERR_METHOD_NOT_ALLOWED');
  });

  it.each([
    ['a malformed percent-escape', '/v1/gpus/%zz', 400, 'TOPOD_ERR_MALFORMED_URL'],
    ['an over-long path parameter', `/v1/gpus/${'x'.repeat(300)}`, 414, 'TOPOD_ERR_URI_TOO_LONG'],
  ])('answers routing failures (%s) as problems too', async (_label, url, status, code) => {
    t = await buildTestApp();
    const res = await t.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
    expect(res.json().code).toBe(code);
  });

  it('hides internals of an unexpected failure from the client and logs them', async () => {
    const topology = new FakeTopology();
    topology.listGpus = () => {
      throw new Error(SECRET_DETAIL);
    };
    t = await buildTestApp({ topology, captureLogs: true });
    const res = await t.app.inject({ method: 'GET', url: '/v1/gpus' });
    expect(res.statusCode).toBe(500);
    expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
    expect(res.json()).toMatchObject({ code: 'TOPOD_ERR_INTERNAL', status: 500, type: 'urn:topod:problem:internal' });
    expect(res.body).not.toContain('SQLITE_CORRUPT');
    const logged = t.logs.map((line) => JSON.parse(line)).find((entry) => entry.level === 50);
    expect(logged?.err?.message).toBe(SECRET_DETAIL);
    expect(logged?.err?.stack).toContain('errors.test.ts');
  });

  it('carries the same required members on every problem', async () => {
    t = await buildTestApp();
    const responses = await Promise.all([
      t.app.inject({ method: 'GET', url: '/nope' }),
      t.app.inject({ method: 'GET', url: '/v1/jobs?limit=-1' }),
      t.app.inject({ method: 'PUT', url: '/v1/gpus' }),
    ]);
    for (const res of responses) {
      expect(Object.keys(res.json())).toEqual(expect.arrayContaining(['type', 'title', 'status', 'detail', 'instance', 'code']));
      expect(res.json().status).toBe(res.statusCode);
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });
});

describe('during shutdown (real socket)', () => {
  it('answers requests on a kept-alive connection with a 503 problem', async () => {
    const topology = new FakeTopology();
    const app = await buildApp({ config: { adminToken: null, bodyLimitBytes: 1024 }, topology, version: 'test' });
    let releaseClose = (): void => undefined;
    // Holds the shutdown open so a request can arrive while it is under way.
    app.addHook('preClose', (done) => {
      releaseClose = done;
    });
    const address = new URL(await app.listen({ host: '127.0.0.1', port: 0 }));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status: number; type: string | undefined; body: string; connection: string | undefined }>((resolve, reject) => {
        http
          .get({ host: address.hostname, port: address.port, path: '/healthz', agent }, (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => (body += chunk.toString()));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body, connection: res.headers.connection }),
            );
          })
          .on('error', reject);
      });
    try {
      expect((await get()).status).toBe(200);
      const closed = app.close();
      const during = await get();
      expect(during.status).toBe(503);
      expect(during.type).toMatch(PROBLEM_TYPE);
      expect(during.connection).toBe('close');
      expect(JSON.parse(during.body)).toMatchObject({ code: 'TOPOD_ERR_SHUTTING_DOWN', status: 503 });
      releaseClose();
      await closed;
    } finally {
      agent.destroy();
    }
  });
});
