/**
 * GET /v1/gpus/{id}/topology — the hot path for schedulers and pollers. The
 * body was serialised once by the topology service; it is sent as-is.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ExportIncompleteError, TopologyPendingError, TopologyUnavailableError } from '../errors.js';
import { MT4G_MEDIA_TYPE } from '../faces/mt4g-export.js';
import { LinkHeaderSchema, jsonResponse, problemResponse, RetryAfterHeaderSchema } from '../model/api-schema.js';
import { GpuParamsSchema } from '../model/gpu-schema.js';
import { TopologyDocumentSchema } from '../model/topology-schema.js';
import { notServed } from './face-lookup.js';
import { sendMt4g } from './mt4g.js';
import { formatEtag, ifNoneMatchHits } from './http-cache.js';

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
        headers: Type.Object({
          'if-none-match': Type.Optional(Type.String({ description: 'ETags from earlier answers, or *' })),
          accept: Type.Optional(Type.String({ description: `${MT4G_MEDIA_TYPE} asks for the MT4G export, as format=mt4g does` })),
        }),
        querystring: Type.Object({
          format: Type.Optional(
            Type.Unsafe<'json' | 'mt4g'>({
              type: 'string',
              enum: ['json', 'mt4g'],
              description:
                'json (default): the topology document; mt4g: MT4G 1.x JSON as MT4G writes it (sys-sage reads it), topod-only data under the `topod` key',
            }),
          ),
        }),
        response: {
          200: {
            description: 'the topology document, or with format=mt4g the MT4G 1.x result',
            content: {
              ...jsonResponse('the topology document', TopologyDocumentSchema).content,
              [MT4G_MEDIA_TYPE]: {
                schema: Type.Object(
                  {},
                  { additionalProperties: true, description: 'MT4G 1.x result: compute, general, memory, meta, and topod' },
                ),
              },
            },
            headers: { etag: EtagHeaderSchema, 'cache-control': Type.Literal('no-cache') },
          },
          304: { description: 'unchanged since the ETag sent in If-None-Match', type: 'null', headers: { etag: EtagHeaderSchema } },
          404: problemResponse('no such GPU'),
          409: problemResponse(
            `format=mt4g only: the result has no device properties to export (${ExportIncompleteError.code}); probe the GPU again`,
          ),
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
      const { id } = request.params;
      if (
        request.query.format === 'mt4g' ||
        (request.query.format === undefined && (request.headers.accept ?? '').includes(MT4G_MEDIA_TYPE))
      )
        return sendMt4g(app, id, request, reply);
      const lookup = app.topology.getTopology(id);
      switch (lookup.kind) {
        case 'ready': {
          const etag = formatEtag(lookup.document.etag);
          reply.header('etag', etag).header('cache-control', 'no-cache');
          if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return reply.code(304).send();
          return reply.type(JSON_CONTENT_TYPE).send(lookup.document.body);
        }
        default:
          return notServed(lookup, id);
      }
    },
  );
};

export default topologyRoutes;
