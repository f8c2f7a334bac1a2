/**
 * GET /v1/gpus/{id}/topology — the hot path for schedulers and pollers. The
 * body was serialised once by the topology service; it is sent as-is.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { TopologyPendingError, TopologyUnavailableError } from '../errors.js';
import { unknownGpu } from './gpus.js';
import { formatEtag, ifNoneMatchHits } from './http-cache.js';
import { jobExtensions, jobLinkHeader } from './links.js';
import { LinkHeaderSchema, jsonResponse, problemResponse } from './schemas/common.js';
import { GpuParamsSchema } from './schemas/gpu.js';
import { TopologyDocumentSchema } from './schemas/topology.js';

/** How long a client should wait before asking again while a probe runs. */
export const PENDING_RETRY_AFTER_SECONDS = 5;

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

const EtagHeaderSchema = Type.String({ description: 'changes whenever the measured or live (MIG) topology changes' });

const topologyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/gpus/:id/topology',
    {
      schema: {
        tags: ['topology'],
        operationId: 'getTopology',
        summary: 'Measured memory topology of one GPU, merged with live MIG state',
        description: 'Never waits on a GPU. Send If-None-Match with the last ETag to poll cheaply (304).',
        params: GpuParamsSchema,
        headers: Type.Object({ 'if-none-match': Type.Optional(Type.String({ description: 'ETags from earlier answers, or *' })) }),
        response: {
          200: {
            ...jsonResponse('the topology document', TopologyDocumentSchema),
            headers: { etag: EtagHeaderSchema, 'cache-control': Type.Literal('no-cache') },
          },
          304: { description: 'unchanged since the ETag sent in If-None-Match', type: 'null', headers: { etag: EtagHeaderSchema } },
          404: problemResponse('no such GPU'),
          503: {
            ...problemResponse(`not measured yet (code ${TopologyPendingError.code}, with jobUrl) or cannot be (${TopologyUnavailableError.code})`),
            headers: { 'retry-after': Type.Integer({ description: 'seconds, while a probe is pending' }), link: LinkHeaderSchema },
          },
        },
      },
    },
    (request, reply) => {
      const { id } = request.params;
      const lookup = app.topology.getTopology(id);
      switch (lookup.kind) {
        case 'ready': {
          const etag = formatEtag(lookup.document.etag);
          reply.header('etag', etag).header('cache-control', 'no-cache');
          if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return reply.code(304).send();
          return reply.type(JSON_CONTENT_TYPE).send(lookup.document.body);
        }
        case 'pending':
          throw new TopologyPendingError(`GPU "${id}" has not been measured yet; probe job ${lookup.job.id} is ${lookup.job.state}.`, {
            extensions: jobExtensions(lookup.job),
            headers: { 'retry-after': String(PENDING_RETRY_AFTER_SECONDS), link: jobLinkHeader(lookup.job.id) },
          });
        case 'unavailable':
          throw new TopologyUnavailableError(lookup.reason);
        case 'unknown':
          throw unknownGpu(id);
      }
    },
  );
};

export default topologyRoutes;
