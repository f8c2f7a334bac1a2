import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { TopodEvent } from '../../../server/model/topology-api.js';
import { makeJob } from './fake-topology.js';
import { buildTestApp, type TestApp } from './harness.js';

/** Reads an SSE body chunk by chunk until `done` says the text so far is enough. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, done: (text: string) => boolean): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  while (!done(text)) {
    const chunk = await reader.read();
    if (chunk.done) throw new Error(`stream ended early after: ${JSON.stringify(text)}`);
    text += decoder.decode(chunk.value, { stream: true });
  }
  return text;
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

describe('GET /v1/events (Server-Sent Events, real socket)', () => {
  let t: TestApp | undefined;
  afterEach(() => t?.app.close());

  const open = async (heartbeatMs = 60_000) => {
    t = await buildTestApp({ sseHeartbeatMs: heartbeatMs });
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const controller = new AbortController();
    const res = await fetch(`${address}/v1/events`, { signal: controller.signal });
    if (!res.body) throw new Error('no body');
    return { res, reader: res.body.getReader(), controller, topology: t.topology };
  };

  it('streams each event as "event: <type>" + "data: <json>"', async () => {
    const { res, reader, controller, topology } = await open();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    await readUntil(reader, (text) => text.includes(': connected'));
    await until(() => topology.listeners.size === 1);

    const events: TopodEvent[] = [
      { type: 'topology.changed', gpuUuid: 'GPU-a', etag: '"e2"', at: '2025-01-01T00:00:01.000Z' },
      { type: 'probe.started', gpuUuid: 'GPU-a', job: makeJob({ state: 'running' }), at: '2025-01-01T00:00:02.000Z' },
    ];
    for (const event of events) topology.emit(event);
    const text = await readUntil(reader, (soFar) => soFar.includes('event: probe.started'));
    const frames = text.split('\n\n').filter((frame) => frame.startsWith('event: '));
    expect(frames.slice(0, 2)).toEqual(events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}`));
    controller.abort();
  });

  it('sends heartbeat comments', async () => {
    const { reader, controller } = await open(20);
    const text = await readUntil(reader, (soFar) => soFar.split(': heartbeat\n\n').length > 2);
    expect(text).toContain(': heartbeat');
    controller.abort();
  });

  it('unsubscribes when the client goes away', async () => {
    // node:http rather than fetch: destroying the request closes the socket at once,
    // where an aborted fetch leaves it to undici's keep-alive timer.
    t = await buildTestApp();
    const topology = t.topology;
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    let subscribedWhileOpen = 0;
    await new Promise<void>((resolve, reject) => {
      const request = http.get(`${address}/v1/events`, { agent: false }, (res) => {
        res.once('data', () => {
          subscribedWhileOpen = topology.listeners.size;
          request.destroy();
          resolve();
        });
      });
      request.on('error', reject);
    });
    expect(subscribedWhileOpen).toBe(1);
    await until(() => topology.listeners.size === 0);
  });

  it('lets the app close while a stream is open', async () => {
    const { reader, topology } = await open();
    await readUntil(reader, (text) => text.includes(': connected'));
    await t?.app.close();
    t = undefined;
    expect(topology.listeners.size).toBe(0);
  });
});
