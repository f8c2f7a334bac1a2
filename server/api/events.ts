/**
 * GET /v1/events — Server-Sent Events of TopodEvent for dashboards that would
 * rather listen than poll. A comment line every heartbeat keeps proxies from
 * closing an idle stream; a client that stops reading is dropped rather than
 * buffered without bound.
 *
 * Every frame carries an `id:` (a sequence number of this daemon process), and
 * the last REPLAY_EVENTS events are kept: a client that reconnects with
 * `Last-Event-ID` (EventSource does so by itself) is sent what it missed
 * first. An id the buffer no longer reaches, or one from an earlier process,
 * replays nothing; the client should then re-read the state it shows.
 * `?lastEventId=` does the same for a client that cannot set the header
 * (EventSource on its first connection): 0 sends every event kept, so a page
 * opened now shows the recent events. The header, once sent, wins.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ServerResponse } from 'node:http';
import type { TopodEvent } from '../model/topology-api.js';

export const DEFAULT_HEARTBEAT_MS = 15_000;
/** A client this far behind is not reading; drop it. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
const RECONNECT_MS = 3_000;
/** Events kept for clients that reconnect with Last-Event-ID. */
export const REPLAY_EVENTS = 1000;

export interface EventRoutesOptions {
  heartbeatMs?: number;
}

/** A job as clients see it: progress rounded to 0.1 % (the scheduler's fractions have 16 digits). */
export function roundedJob<T extends { progress: number }>(job: T): T {
  return { ...job, progress: Math.round(job.progress * 1000) / 1000 };
}

/** The event as sent: a job's progress rounded. */
export function publicEvent(event: TopodEvent): TopodEvent {
  return 'job' in event ? { ...event, job: roundedJob(event.job) } : event;
}

/** One SSE frame. JSON has no raw newlines, so one data line suffices. */
export function formatSseEvent(event: TopodEvent, id?: number): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event.type}\ndata: ${JSON.stringify(publicEvent(event))}\n\n`;
}

const EventStreamSchema = Type.String({
  description:
    'text/event-stream: frames "id: <sequence>" + "event: <type>" + "data: <TopodEvent JSON>"; types gpu.added, gpu.removed, mig.changed, topology.changed, probe.*. Reconnect with Last-Event-ID to get the events missed (the last 1000 are kept)',
});

const eventRoutes: FastifyPluginAsyncTypebox<EventRoutesOptions> = async (app, options) => {
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const open = new Set<ServerResponse>();
  /** The last REPLAY_EVENTS frames with their ids, oldest first; one subscription for all streams. */
  const history: Array<{ id: number; frame: string }> = [];
  let nextId = 1;
  const streams = new Set<(frame: string) => void>();
  const unsubscribe = app.topology.subscribe((event) => {
    const entry = { id: nextId++, frame: '' };
    entry.frame = formatSseEvent(event, entry.id);
    history.push(entry);
    if (history.length > REPLAY_EVENTS) history.shift();
    for (const send of streams) send(entry.frame);
  });
  app.addHook('onClose', async () => unsubscribe());

  // Streams never end on their own; close them or app.close() waits forever.
  app.addHook('preClose', async () => {
    for (const stream of open) stream.end();
  });

  app.get(
    '/events',
    {
      // A HEAD would open a stream that never sends anything.
      exposeHeadRoute: false,
      schema: {
        tags: ['events'],
        operationId: 'streamEvents',
        summary: 'Stream of topology, MIG and probe events (Server-Sent Events)',
        headers: Type.Object({
          'last-event-id': Type.Optional(
            Type.String({ description: 'the id of the last event received: the events after it are sent first' }),
          ),
        }),
        querystring: Type.Object({
          lastEventId: Type.Optional(
            Type.Integer({
              minimum: 0,
              description: 'as Last-Event-ID, for clients that cannot set headers; 0 sends every event kept first. The header wins',
            }),
          ),
        }),
        response: { 200: { description: 'an endless event stream', content: { 'text/event-stream': { schema: EventStreamSchema } } } },
      },
    },
    (request, reply) => {
      reply.hijack();
      const stream = reply.raw;
      stream.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      stream.write(`retry: ${RECONNECT_MS}\n: connected\n\n`);
      open.add(stream);
      const lastId = Number(request.headers['last-event-id'] ?? request.query.lastEventId);
      if (Number.isInteger(lastId) && lastId >= 0 && lastId < nextId) {
        for (const entry of history) if (entry.id > lastId) stream.write(entry.frame);
      }

      const send = (frame: string): void => {
        if (stream.writableLength > MAX_BUFFERED_BYTES) {
          request.log.warn('event stream client is not reading; closing it');
          stream.destroy();
          return;
        }
        stream.write(frame);
      };
      streams.add(send);
      const heartbeat = setInterval(() => send(': heartbeat\n\n'), heartbeatMs);
      heartbeat.unref();

      stream.on('close', () => {
        clearInterval(heartbeat);
        streams.delete(send);
        open.delete(stream);
      });
    },
  );
};

export default eventRoutes;
