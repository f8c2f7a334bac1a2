/**
 * GET /v1/gpus/{id}/topology.svg — the topology picture (server/faces/svg.ts).
 * Drawn from the served document, so its ETag follows the document's; a MIG
 * device UUID draws its parent GPU with every instance's region.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { TopologyPendingError, TopologyUnavailableError } from '../errors.js';
import { topologySvg } from '../faces/svg.js';
import { LinkHeaderSchema, problemResponse, RetryAfterHeaderSchema } from '../model/api-schema.js';
import { GpuParamsSchema } from '../model/gpu-schema.js';
import { servedGpuDocument } from './face-lookup.js';
import { formatEtag, ifNoneMatchHits } from './http-cache.js';

const SVG_CONTENT_TYPE = 'image/svg+xml; charset=utf-8';
/** One rendering per document: pictures are asked for far less often than documents change. */
const rendered = new WeakMap<object, string>();

const pictureRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/gpus/:id/topology.svg',
    {
      schema: {
        tags: ['topology'],
        operationId: 'getTopologyPicture',
        summary: 'The topology drawn as lstopo draws a machine (SVG)',
        description:
          'SMs, each per-SM cache with size and latency (cycles and ns), the L2 and its segments, device memory, bandwidths on the links; with MIG on, each GPU instance as a coloured region with its SMs, memory slices and L2 share. Deterministic for a given document.',
        params: GpuParamsSchema,
        headers: Type.Object({ 'if-none-match': Type.Optional(Type.String()) }),
        response: {
          200: {
            description: 'the picture',
            content: { 'image/svg+xml': { schema: Type.String({ description: 'SVG 1.1 document' }) } },
            headers: { etag: Type.String({ description: 'follows the topology document’s ETag' }) },
          },
          304: { description: 'unchanged since the ETag sent', type: 'null' },
          404: problemResponse('no such GPU'),
          503: {
            ...problemResponse(
              `not measured yet (code ${TopologyPendingError.code}, with jobUrl) or cannot be (${TopologyUnavailableError.code})`,
            ),
            headers: { 'retry-after': RetryAfterHeaderSchema, link: LinkHeaderSchema },
          },
        },
      },
    },
    (request, reply) => {
      const { document, etag } = servedGpuDocument(app, request.params.id);
      const svgEtag = formatEtag(`${etag.replaceAll('"', '')}-svg`);
      reply.header('etag', svgEtag).header('cache-control', 'no-cache');
      if (ifNoneMatchHits(request.headers['if-none-match'], svgEtag)) return reply.code(304).send();
      let svg = rendered.get(document);
      if (svg === undefined) {
        svg = topologySvg(document);
        rendered.set(document, svg);
      }
      return reply.type(SVG_CONTENT_TYPE).send(svg);
    },
  );
};

export default pictureRoutes;
