/**
 * The dashboard: GET / and GET /ui/ serve ui/index.html, /ui/* its static
 * files (@fastify/static; plain ES modules and a favicon, no build step). The
 * page reads the same API as everyone else: /v1/gpus, the topology, its
 * picture, /v1/node for the node view and /v1/events (replayed on load) for
 * the event log, live probe progress and MIG changes.
 */
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// wildcard: false registers one route per file, so an unknown /ui/ path is a plain 404 (not 405 from the
// method index of a /ui/* route).

/** ui/ at the repository root, found from this module in server/api/ or dist/server/api/. */
export function uiRoot(from = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'ui', 'index.html'))) return path.join(dir, 'ui');
    if (path.dirname(dir) === dir) throw new Error(`ui/index.html not found above ${from}`);
  }
}

const HtmlSchema = Type.String({ description: 'the dashboard page (text/html)' });

const uiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(fastifyStatic, { root: uiRoot(), prefix: '/ui/', index: false, schemaHide: true, maxAge: 0, wildcard: false });
  for (const url of ['/', '/ui/']) {
    app.get(
      url,
      {
        schema: {
          tags: ['ui'],
          operationId: url === '/' ? 'getDashboard' : 'getDashboardUi',
          summary: 'The dashboard: GPUs, the topology picture, MIG instances with their L2 shares, live probe progress and MIG changes',
          response: { 200: { description: 'the page', content: { 'text/html': { schema: HtmlSchema } } } },
        },
      },
      (_request, reply) => {
        reply.type('text/html; charset=utf-8').sendFile('index.html');
      },
    );
  }
};

export default uiRoutes;
