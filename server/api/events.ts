/**
 * GET /v1/events — Server-Sent Events of TopodEvent for dashboards that would
 * rather listen than poll. A comment line every heartbeat keeps proxies from
 * closing an idle stream; a client that stops reading is dropped rather than
 * buffered without bound.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ServerResponse } from 'node:http';
import type { TopodEvent } from '../model/topology-api.js';

export const DEFAULT_HEARTBEAT_MS = 15_000;
/** A client this far behind is not reading; drop it. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
const RECONNECT_MS = 3_000;

export interface EventRoutesOptions {
  heartbeatMs?: number;
}

/** One SSE frame. JSON has no raw newlines, so one data line suffices. */
export function formatSseEvent(event: TopodEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

const EventStreamSchema = Type.String({
  description: 'text/event-stream: frames "event: <type>" + "data: <TopodEvent JSON>"; types gpu.added, gpu.removed, mig.changed, topology.changed, probe.*',
});

const eventRoutes: FastifyPluginAsyncTypebox<EventRoutesOptions> = async (app, options) => {
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const open = new Set<ServerResponse>();

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

      const send = (frame: string): void => {
        if (stream.writableLength > MAX_BUFFERED_BYTES) {
          request.log.warn('event stream client is not reading; closing it');
          stream.destroy();
          return;
        }
        stream.write(frame);
      };
      const unsubscribe = app.topology.subscribe((event) => send(formatSseEvent(event)));
      const heartbeat = setInterval(() => send(': heartbeat\n\n'), heartbeatMs);
      heartbeat.unref();

      stream.on('close', () => {
        clearInterval(heartbeat);
        unsubscribe();
        open.delete(stream);
      });
    },
  );
};

export default eventRoutes;
