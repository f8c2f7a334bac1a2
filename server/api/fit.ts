/** GET /v1/gpus/{id}/fit?workingSetBytes= — MIG fit advice (server/faces/fit.ts). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { TopologyPendingError, TopologyUnavailableError } from '../errors.js';
import { FitAdviceSchema, fitAdvice } from '../faces/fit.js';
import { LinkHeaderSchema, jsonResponse, problemResponse } from '../model/api-schema.js';
import { GpuParamsSchema } from '../model/gpu-schema.js';
import { servedGpuDocument } from './face-lookup.js';

/** 2^53: the largest byte count a JSON number carries exactly. */
const MAX_WORKING_SET_BYTES = Number.MAX_SAFE_INTEGER;

export const FitQuerySchema = Type.Object(
  { workingSetBytes: Type.Integer({ minimum: 1, maximum: MAX_WORKING_SET_BYTES, description: 'the working set in bytes' }) },
  { additionalProperties: false },
);

const fitRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/gpus/:id/fit',
    {
      schema: {
        tags: ['topology'],
        operationId: 'getFitAdvice',
        summary: 'Which MIG profiles keep a working set inside their L2 share, and the latency to expect',
        description:
          'From the measured L2 size, segment and latencies and NVML’s GPU-instance profile table: per profile the L2 share, what one SM reaches (min(share, segment)), whether the working set fits each, and the latency class (L2 hit, far L2, device memory) with the measured latency. A MIG device UUID answers for its parent GPU.',
        params: GpuParamsSchema,
        querystring: FitQuerySchema,
        response: {
          200: jsonResponse('the advice, with the numbers it used', FitAdviceSchema),
          400: problemResponse('workingSetBytes missing, not an integer or out of range'),
          404: problemResponse('no such GPU'),
          503: {
            ...problemResponse(`not measured yet (code ${TopologyPendingError.code}, with jobUrl) or cannot be (${TopologyUnavailableError.code})`),
            headers: { 'retry-after': Type.Integer({ description: 'seconds, while a probe is pending' }), link: LinkHeaderSchema },
          },
        },
      },
    },
    async (request) => fitAdvice(servedGpuDocument(app, request.params.id).document, request.query.workingSetBytes),
  );
};

export default fitRoutes;
