/** GET /v1/gpus/{id}/fit?workingSetBytes=[&strideBytes=&elementBytes=&pattern=&target=] — MIG fit advice (server/faces/fit.ts). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { TopologyPendingError, TopologyUnavailableError, ValidationError } from '../errors.js';
import { fitAdvice } from '../faces/fit.js';
import type { FitAccess } from '../faces/fit-traffic.js';
import { LinkHeaderSchema, jsonResponse, problemResponse, RetryAfterHeaderSchema } from '../model/api-schema.js';
import { FitAdviceSchema, FitQuerySchema, type FitQuery } from '../model/fit-schema.js';
import { GpuParamsSchema } from '../model/gpu-schema.js';
import { servedGpuDocument } from './face-lookup.js';

/** The access the query describes (any access field given), defaults filled in; undefined when it describes none. */
export function accessOf(query: FitQuery): FitAccess | undefined {
  const { workingSetBytes, strideBytes, elementBytes, pattern, target } = query;
  if (strideBytes === undefined && elementBytes === undefined && pattern === undefined && target === undefined) return undefined;
  const element = elementBytes ?? 4;
  const stride = strideBytes ?? element;
  if (stride < element) throw new ValidationError(`querystring/strideBytes must be at least elementBytes (${element})`);
  if (element > workingSetBytes) throw new ValidationError(`querystring/elementBytes must be at most workingSetBytes (${workingSetBytes})`);
  return { pattern: pattern ?? 'read', target: target ?? 'written', strideBytes: stride, elementBytes: element };
}

const fitRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/gpus/:id/fit',
    {
      schema: {
        tags: ['topology'],
        operationId: 'getFitAdvice',
        summary:
          'Which MIG profiles keep a working set inside their L2 share, the latency to expect, and what a strided access costs in device-memory traffic',
        description:
          'From the measured L2 size, segment and latencies and NVML’s GPU-instance profile table: per profile the L2 share, what one SM reaches (min(share, segment)), whether the working set fits each, and the latency class (L2 hit, far L2, device memory) with the measured latency. With any of strideBytes, elementBytes (default 4), pattern (default read) or target (default written) the advice describes that access over the working set (strideBytes defaults to elementBytes: contiguous) and adds `traffic`: the predicted device-memory bytes per useful byte from the GPU’s measured traffic (as GET /v1/gpus/{id}/traffic predicts it) and the effective bandwidth it implies (measured device-memory bandwidth / amplification), or says that the traffic was never measured (opt-in: a probe with only ["traffic"]). A MIG device UUID answers for its parent GPU.',
        params: GpuParamsSchema,
        querystring: FitQuerySchema,
        response: {
          200: jsonResponse('the advice, with the numbers it used', FitAdviceSchema),
          400: problemResponse(
            'workingSetBytes missing, not an integer or out of range; an access field out of range; strideBytes below elementBytes or elementBytes above workingSetBytes',
          ),
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
    async (request) => {
      const access = accessOf(request.query);
      return fitAdvice(servedGpuDocument(app, request.params.id).document, request.query.workingSetBytes, access);
    },
  );
};

export default fitRoutes;
