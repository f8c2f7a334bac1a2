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
    // The app's own subscribers (the events route's replay buffer, the metrics) are there before any stream.
    const baseline = t.topology.listeners.size;
    const res = await fetch(`${address}/v1/events`, { signal: controller.signal });
    if (!res.body) throw new Error('no body');
    return { res, reader: res.body.getReader(), controller, topology: t.topology, baseline };
  };

  it('streams each event as "id: <n>" + "event: <type>" + "data: <json>"', async () => {
    const { res, reader, controller, topology } = await open();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    await readUntil(reader, (text) => text.includes(': connected'));
    await until(() => topology.listeners.size > 0);

    const events: TopodEvent[] = [
      { type: 'topology.changed', gpuUuid: 'GPU-a', etag: '"e2"', at: '2025-01-01T00:00:01.000Z' },
      { type: 'probe.started', gpuUuid: 'GPU-a', job: makeJob({ state: 'running' }), at: '2025-01-01T00:00:02.000Z' },
    ];
    for (const event of events) topology.emit(event);
    const text = await readUntil(reader, (soFar) => soFar.includes('event: probe.started'));
    const frames = text.split('\n\n').filter((frame) => frame.startsWith('event: '));
    const body = text.split('\n\n').filter((frame) => frame.startsWith('id: '));
    expect(body.slice(0, 2)).toEqual(events.map((event, i) => `id: ${i + 1}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}`));
    expect(frames).toEqual([]);
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
    const baseline = topology.listeners.size;
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
    // One subscription serves every stream (the replay buffer's): a stream adds none and leaves none behind.
    expect(subscribedWhileOpen).toBe(baseline);
    await until(() => topology.listeners.size === baseline);
  });

  it('lets the app close while a stream is open', async () => {
    const { reader, topology } = await open();
    await readUntil(reader, (text) => text.includes(': connected'));
    await t?.app.close();
    t = undefined;
    expect(topology.listeners.size).toBe(0);
  });

  it('replays what a client missed when it reconnects with Last-Event-ID, and rounds job progress', async () => {
    const first = await open();
    await readUntil(first.reader, (text) => text.includes(': connected'));
    const job = makeJob({ state: 'running', progress: 1 / 3, phase: 'l2.size.coarse' });
    first.topology.emit({ type: 'probe.started', gpuUuid: job.gpuUuid, job, at: '2025-01-01T00:00:01.000Z' });
    const seen = await readUntil(first.reader, (text) => text.includes('event: probe.started'));
    expect(seen).toContain('"progress":0.333,');
    const lastId = /^id: (\d+)$/m.exec(seen)![1]!;
    first.controller.abort();
    // Missed while away: two events; the reconnect gets them first, in order, with their ids.
    first.topology.emit({ type: 'mig.changed', gpuUuid: job.gpuUuid, at: '2025-01-01T00:00:02.000Z' });
    first.topology.emit({
      type: 'probe.progress',
      gpuUuid: job.gpuUuid,
      job: { ...job, progress: 0.66666 },
      at: '2025-01-01T00:00:03.000Z',
    });
    const address = first.res.url.replace(/\/v1\/events$/, '');
    const again = await fetch(`${address}/v1/events`, { headers: { 'last-event-id': lastId } });
    const reader = again.body!.getReader();
    const text = await readUntil(reader, (soFar) => soFar.includes('event: probe.progress'));
    const ids = [...text.matchAll(/^id: (\d+)\nevent: (\S+)$/gm)].map((m) => [Number(m[1]), m[2]]);
    expect(ids).toEqual([
      [Number(lastId) + 1, 'mig.changed'],
      [Number(lastId) + 2, 'probe.progress'],
    ]);
    expect(text).toContain('"progress":0.667,');
    await reader.cancel();
  });

  it('sends every event kept first to a client that asks with ?lastEventId=0 (a page opened now)', async () => {
    const first = await open();
    await readUntil(first.reader, (text) => text.includes(': connected'));
    first.topology.emit({ type: 'mig.changed', gpuUuid: 'GPU-a', at: '2025-01-01T00:00:01.000Z' });
    first.topology.emit({ type: 'topology.changed', gpuUuid: 'GPU-a', etag: '"e1"', at: '2025-01-01T00:00:02.000Z' });
    await readUntil(first.reader, (text) => text.includes('event: topology.changed'));
    const address = first.res.url.replace(/\/v1\/events$/, '');
    first.controller.abort();
    const page = await fetch(`${address}/v1/events?lastEventId=0`);
    const reader = page.body!.getReader();
    const text = await readUntil(reader, (soFar) => soFar.includes('event: topology.changed'));
    expect([...text.matchAll(/^event: (\S+)$/gm)].map((m) => m[1])).toEqual(['mig.changed', 'topology.changed']);
    await reader.cancel();
  });
});
