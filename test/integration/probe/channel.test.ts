import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ProbeChannel } from '../../../server/gpu/backend.js';
import { JsonLinesChannel, parseResponse, type LoggerLike } from '../../../server/gpu/native.js';
import { expectProbeError } from './raw-probe.js';

const STUB = path.join(path.dirname(fileURLToPath(import.meta.url)), 'stub-probe.mjs');

/** Requests the stub understands beyond the protocol's ops (it echoes args and misbehaves on `behave`). */
type StubArgs = { behave?: 'garbage' | 'crash' | 'hang' | 'null-id' | 'error'; code?: string; n?: number };
function stubRequest(channel: ProbeChannel, args: StubArgs, options?: { timeoutMs?: number; signal?: AbortSignal }) {
  return channel.request('pchase', args as never, options) as unknown as Promise<{ pid: number; args: StubArgs }>;
}

function spyLogger() {
  const warn = vi.fn<(obj: object, msg?: string) => void>();
  const logger: LoggerLike = { debug: vi.fn(), info: vi.fn(), warn, error: vi.fn() };
  return { logger, warn };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('JsonLinesChannel against a misbehaving stub probe', () => {
  const channels: JsonLinesChannel[] = [];
  const open = (extra: Partial<ConstructorParameters<typeof JsonLinesChannel>[0]> = {}) => {
    // Far above any request's own timeout below, and above a stub's start on a busy machine.
    const c = new JsonLinesChannel({ command: STUB, requestTimeoutMs: 30_000, ...extra });
    channels.push(c);
    return c;
  };
  afterEach(async () => {
    await Promise.all(channels.splice(0).map((c) => c.close()));
  });

  it('answers hello and echoes requests, one process for many requests', async () => {
    const channel = open();
    const hello = await channel.request('hello', {});
    expect(hello.devices).toHaveLength(2);
    const a = await stubRequest(channel, { n: 1 });
    const b = await stubRequest(channel, { n: 2 });
    expect([a.args.n, b.args.n]).toEqual([1, 2]);
    expect(a.pid).toBe(b.pid);
    expect(channel.startCount).toBe(1);
  });

  it('answers concurrent requests in order', async () => {
    const channel = open();
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => stubRequest(channel, { n })));
    expect(results.map((r) => r.args.n)).toEqual([1, 2, 3, 4, 5]);
  });

  it('logs and ignores garbage stdout lines', async () => {
    const { logger, warn } = spyLogger();
    const channel = open({ logger });
    const r = await stubRequest(channel, { behave: 'garbage', n: 7 });
    expect(r.args.n).toBe(7);
    const ignored = warn.mock.calls.filter(([, msg]) => typeof msg === 'string' && msg.includes('not a response'));
    expect(ignored.length).toBeGreaterThanOrEqual(4);
  });

  it('turns error responses into ProbeError with the protocol code', async () => {
    const channel = open();
    const error = await expectProbeError(stubRequest(channel, { behave: 'error', code: 'out_of_memory' }), 'out_of_memory');
    expect(error.message).toContain('out_of_memory');
    await expectProbeError(channel.request('calibrate', {}), 'unknown_op');
  });

  it('attributes an id-less error response to the request in flight', async () => {
    const channel = open();
    await expectProbeError(stubRequest(channel, { behave: 'null-id' }), 'bad_request');
    expect((await stubRequest(channel, { n: 1 })).args.n).toBe(1);
  });

  it('fails the in-flight request when the probe crashes, then restarts it', async () => {
    const channel = open();
    const first = await stubRequest(channel, { n: 1 });
    const error = await expectProbeError(stubRequest(channel, { behave: 'crash' }), 'crashed');
    expect(error.message).toMatch(/exited \(code 1\)/);
    expect(error.message).toContain('simulated kernel fault');
    const after = await stubRequest(channel, { n: 2 });
    expect(after.pid).not.toBe(first.pid);
    expect(channel.startCount).toBe(2);
  });

  it('times out a hung request, kills the process and serves the next request from a fresh one', async () => {
    const channel = open();
    const before = await stubRequest(channel, { n: 1 });
    const started = Date.now();
    await expectProbeError(stubRequest(channel, { behave: 'hang' }, { timeoutMs: 300 }), 'timeout');
    expect(Date.now() - started).toBeLessThan(15_000); // the request's 300 ms, not the channel's 30 s
    await vi.waitFor(() => expect(isAlive(before.pid)).toBe(false));
    const after = await stubRequest(channel, { n: 2 });
    expect(after.pid).not.toBe(before.pid);
  });

  it('uses the channel-wide timeout when the request names none', async () => {
    const channel = open({ requestTimeoutMs: 200 });
    await expectProbeError(stubRequest(channel, { behave: 'hang' }), 'timeout');
  });

  it('cancels on abort, killing the process', async () => {
    const channel = open();
    const { pid } = await stubRequest(channel, { n: 1 });
    const controller = new AbortController();
    const pending = stubRequest(channel, { behave: 'hang' }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expectProbeError(pending, 'cancelled');
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false));
    const already = new AbortController();
    already.abort();
    await expectProbeError(stubRequest(channel, { n: 2 }, { signal: already.signal }), 'cancelled');
  });

  it('close() kills the process, fails the pending request and refuses new ones', async () => {
    const channel = open();
    const { pid } = await stubRequest(channel, { n: 1 });
    const pending = stubRequest(channel, { behave: 'hang' });
    await new Promise((r) => setTimeout(r, 50));
    await channel.close();
    await expectProbeError(pending, 'closed');
    expect(isAlive(pid)).toBe(false);
    await expectProbeError(stubRequest(channel, { n: 2 }), 'closed');
  });

  it('reports a binary that cannot be started', async () => {
    const channel = open({ command: '/nonexistent/topod-probe' });
    await expectProbeError(channel.request('hello', {}), 'spawn_failed');
  });
});

describe('parseResponse', () => {
  it('accepts protocol responses only', () => {
    expect(parseResponse('{"id":1,"ok":true,"result":{"a":1}}')).toEqual({ id: 1, ok: true, result: { a: 1 } });
    expect(parseResponse('{"id":null,"ok":false,"error":{"code":"bad_request","message":"m"}}')).toEqual({
      id: null,
      ok: false,
      error: { code: 'bad_request', message: 'm' },
    });
    for (const line of ['', 'garbage', '[1]', '{"id":"1","ok":true,"result":1}', '{"id":1,"ok":false}', '{"id":1,"ok":true}', 'null']) {
      expect(parseResponse(line), line).toBeNull();
    }
  });
});
