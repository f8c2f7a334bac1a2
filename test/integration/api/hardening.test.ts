/**
 * The HTTP edges issue 11 found open, each tried as the issue did:
 * coerced bodies and ignored query parameters, browser-driven tokenless
 * mutations (foreign Origin, DNS rebinding), no rate limit, unbounded event
 * streams and connections, parser-level errors in fastify's own JSON, a 414
 * echoing the URI, and two info lines with every header per request.
 */
import type { FastifyInstance } from 'fastify';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import http from 'node:http';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../server/app.js';
import type { ConnectionLimits } from '../../../server/plugins/connection-limits.js';
import { FakeTopology } from './fake-topology.js';
import { PROBLEM_TYPE } from './harness.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function build(
  options: { limits?: Partial<ConnectionLimits>; adminToken?: string | null; logLevel?: string; logs?: string[] } = {},
): Promise<FastifyInstance> {
  const sink = new Writable({
    write(chunk: Buffer, _e, done) {
      options.logs?.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  app = await buildApp({
    config: { adminToken: options.adminToken ?? null, bodyLimitBytes: 16 * 1024, ...options.limits },
    topology: new FakeTopology(),
    logger: options.logs ? pino({ level: options.logLevel ?? 'info' }, sink) : false,
    version: '0.0.0-test',
  });
  await app.ready();
  return app;
}

/** Sends raw bytes on a fresh socket and returns everything the server answers before closing. */
function raw(address: string, bytes: string | Buffer): Promise<string> {
  const { hostname, port } = new URL(address);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let answer = '';
    socket.on('data', (c) => (answer += c.toString()));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy());
  });
}

function problemOf(answer: string): { status: number; type: string; body: Record<string, unknown> } {
  const [head, body] = answer.split('\r\n\r\n');
  expect(head).toMatch(/content-type: application\/problem\+json/i);
  return {
    status: Number(head?.split(' ')[1]),
    type: String(JSON.parse(body ?? '{}').type),
    body: JSON.parse(body ?? '{}') as Record<string, unknown>,
  };
}

describe('strict validation', () => {
  it.each([[{ force: 'true' }], [{ force: 1 }], [{ only: 'l1' }], [{ only: ['l1'], force: 'false' }]])(
    'refuses the coerced body %j with a 400 problem',
    async (body) => {
      const a = await build();
      const res = await a.inject({ method: 'POST', url: '/v1/gpus/0/probe', payload: body });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(PROBLEM_TYPE);
      expect(res.json()).toMatchObject({ code: 'TOPOD_ERR_VALIDATION', errors: [expect.objectContaining({ in: 'body' })] });
    },
  );

  it('still accepts the documented body, and coerces path and query strings to their types', async () => {
    const a = await build();
    expect((await a.inject({ method: 'POST', url: '/v1/gpus/0/probe', payload: { only: ['l1'], force: true } })).statusCode).toBe(202);
    expect((await a.inject({ method: 'GET', url: '/v1/jobs?limit=5&state=failed' })).statusCode).toBe(200);
  });

  it.each(['/v1/jobs?staet=failed', '/v1/gpus?verbose=1', '/v1/gpus/0/topology?x=', '/readyz?full=1'])(
    'answers an undeclared query parameter with 400: %s',
    async (url) => {
      const a = await build();
      const res = await a.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({
        code: 'TOPOD_ERR_VALIDATION',
        detail: expect.stringMatching(/must NOT have additional properties/),
      });
    },
  );

  it('a 414 does not echo the URI', async () => {
    const a = await build();
    const long = 'a'.repeat(3000);
    const res = await a.inject({ method: 'GET', url: `/v1/gpus/${long}/topology` });
    expect(res.statusCode).toBe(414);
    expect(res.body).not.toContain('a'.repeat(200));
    expect(res.json()).toMatchObject({
      code: 'TOPOD_ERR_URI_TOO_LONG',
      detail: expect.stringMatching(/longer than the router accepts/),
      instance: expect.stringMatching(/…$/),
    });
  });
});

describe('tokenless mutations come from local tools, not browsers', () => {
  it.each([
    [{ origin: 'http://evil.example' }, /Origin \(http:\/\/evil\.example\)/],
    [{ origin: 'null' }, /Origin \(null\)/],
    [{ host: 'evil.example.com' }, /Host \(evil\.example\.com\) is not a loopback name/],
    [{ host: 'evil.example.com:8080', origin: 'http://evil.example.com:8080' }, /Origin/],
  ])('refuses %j with a 403 problem', async (headers, detail) => {
    const a = await build();
    const res = await a.inject({ method: 'POST', url: '/v1/gpus/0/probe', headers });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'TOPOD_ERR_FORBIDDEN', detail });
  });

  it.each([
    [{}],
    [{ host: 'localhost:8080' }],
    [{ host: '127.0.0.1:9', origin: 'http://127.0.0.1:9' }],
    [{ host: '[::1]:8080', origin: 'http://localhost:3000' }],
  ])('accepts %j', async (headers) => {
    const a = await build();
    expect((await a.inject({ method: 'POST', url: '/v1/gpus/0/probe', headers })).statusCode).toBe(202);
  });

  it('with a token, Origin and Host do not matter (the token is the proof)', async () => {
    const a = await build({ adminToken: 'a-token-of-some-length' });
    const res = await a.inject({
      method: 'POST',
      url: '/v1/gpus/0/probe',
      headers: { origin: 'https://dashboard.example', host: 'topod.example', authorization: 'Bearer a-token-of-some-length' },
    });
    expect(res.statusCode).toBe(202);
  });
});

describe('limits', () => {
  it('rate-limits mutating requests per address with a 429 problem and Retry-After; reads are never limited', async () => {
    const a = await build({ limits: { rateLimitPerMinute: 3 } });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await a.inject({ method: 'POST', url: '/v1/gpus/0/probe', payload: { force: true } })).statusCode);
    expect(statuses).toEqual([202, 202, 202, 429]);
    const limited = await a.inject({ method: 'POST', url: '/v1/gpus/0/probe' });
    expect(limited.headers['content-type']).toMatch(PROBLEM_TYPE);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(limited.json()).toMatchObject({ status: 429, code: 'TOPOD_ERR_RATE_LIMITED', type: 'urn:topod:problem:rate-limited' });
    for (let i = 0; i < 20; i++) expect((await a.inject({ method: 'GET', url: '/v1/gpus' })).statusCode).toBe(200);
    expect((await a.inject({ method: 'GET', url: '/v1/gpus' })).headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('caps open event streams with a 503 problem, and frees a slot when a client leaves', async () => {
    const a = await build({ limits: { maxEventStreams: 2 } });
    const address = await a.listen({ host: '127.0.0.1', port: 0 });
    const open = () =>
      new Promise<http.ClientRequest & { status?: number }>((resolve, reject) => {
        const request = http.get(`${address}/v1/events`, { agent: false }, (res) => {
          (request as http.ClientRequest & { status?: number }).status = res.statusCode;
          if (res.statusCode !== 200) res.resume();
          resolve(request);
        });
        request.on('error', reject);
      });
    const first = await open();
    const second = await open();
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await fetch(`${address}/v1/events`);
    expect(third.status).toBe(503);
    expect(third.headers.get('content-type')).toMatch(PROBLEM_TYPE);
    expect(await third.json()).toMatchObject({ code: 'TOPOD_ERR_TOO_MANY_STREAMS' });
    first.destroy();
    for (let i = 0; i < 100 && a.openEventStreams() !== 1; i++) await new Promise((r) => setTimeout(r, 10));
    expect(a.openEventStreams()).toBe(1);
    const again = await open();
    expect(again.status).toBe(200);
    again.destroy();
    second.destroy();
  });
});

describe('parser-level errors are problem+json', () => {
  it.each([
    ['an unknown method', 'FOO / HTTP/1.1\r\nHost: localhost\r\n\r\n', 400, 'urn:topod:problem:malformed-request'],
    ['a garbage request line', '\x16\x03\x01garbage\r\n\r\n', 400, 'urn:topod:problem:malformed-request'],
    ['NUL in a header', 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-A: a\x00b\r\n\r\n', 400, 'urn:topod:problem:malformed-request'],
    [
      'Content-Length beside Transfer-Encoding',
      'POST /v1/gpus/0/probe HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
      'urn:topod:problem:malformed-request',
    ],
    [
      'headers over 16 KiB',
      `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
      431,
      'urn:topod:problem:headers-too-large',
    ],
    ['a 20 KiB URI', `GET /v1/gpus/${'u'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`, 431, 'urn:topod:problem:headers-too-large'],
  ])('%s', async (_name, bytes, status, type) => {
    const a = await build();
    const address = await a.listen({ host: '127.0.0.1', port: 0 });
    const answer = await raw(address, bytes);
    const problem = problemOf(answer);
    expect(problem).toMatchObject({ status, type });
    expect(problem.body).toMatchObject({ status, title: expect.any(String), detail: expect.any(String), instance: '' });
    expect(answer).not.toContain('uuuuuuuuuu');
  });
});

describe('request logs', () => {
  it('reads log one line at debug and nothing at info; mutations and errors keep their info lines with only the headers that matter', async () => {
    const logs: string[] = [];
    const a = await build({ logs, logLevel: 'info' });
    await a.inject({
      method: 'GET',
      url: '/v1/gpus',
      headers: { 'user-agent': 'poller/1', 'accept-language': 'de', 'x-noise': 'n'.repeat(300) },
    });
    expect(logs).toEqual([]);
    await a.inject({ method: 'POST', url: '/v1/gpus/0/probe', headers: { 'user-agent': 'cli/1', 'x-noise': 'n' } });
    const incoming = logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'incoming request');
    expect(incoming.req.headers).toEqual({ host: 'localhost:80', 'user-agent': 'cli/1' });

    const debugLogs: string[] = [];
    const b = await build({ logs: debugLogs, logLevel: 'debug' });
    await b.inject({ method: 'GET', url: '/v1/gpus' });
    const lines = debugLogs.map((l) => JSON.parse(l));
    expect(lines).toEqual([expect.objectContaining({ level: 20, msg: 'read', method: 'GET', url: '/v1/gpus', statusCode: 200 })]);
    expect(debugLogs[0]?.length).toBeLessThan(300);
    await b.close();
  });
});
