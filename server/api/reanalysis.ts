/** POST /v1/gpus/{id}/reanalyse: rebuild the served result from its stored raw series, without the GPU. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ConflictError, NoBackendError } from '../errors.js';
import { jsonResponse, problemResponse } from '../model/api-schema.js';
import { GpuParamsSchema } from '../model/gpu-schema.js';
import { ReanalysisSchema } from '../model/reanalysis-schema.js';
import { BEARER_SECURITY } from '../plugins/admin-auth.js';
import { OPTIONAL_BODY_MARKER } from '../plugins/openapi.js';
import { defaultEmptyBody, unknownGpu } from './gpus.js';

const reanalysisRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/gpus/:id/reanalyse',
    {
      onRequest: app.requireAdmin,
      preValidation: defaultEmptyBody,
      schema: {
        [OPTIONAL_BODY_MARKER]: true,
        tags: ['gpus'],
        operationId: 'reanalyseGpu',
        summary: 'Rebuild the served result with the current analysis, from its stored raw series (no GPU time)',
        description:
          'The daemon does this by itself at boot for results of an older analysis; this asks for it now, whatever the version. ' +
          'The rebuilt result is a new stored result that says `probe.reanalysedFrom`. Needs the admin bearer token, or a loopback client when none is configured.',
        security: BEARER_SECURITY,
        params: GpuParamsSchema,
        // Nothing to say yet; a field is refused (as the probe's body refuses unknown ones) rather than ignored.
        body: Type.Object({}, { additionalProperties: false, description: 'no fields: an empty object, or no body' }),
        response: {
          200: jsonResponse('rebuilt and now served', ReanalysisSchema),
          400: problemResponse('a body with fields (it takes none)'),
          401: problemResponse('admin token missing or wrong'),
          403: problemResponse('no admin token configured and the client is not loopback'),
          404: problemResponse('no such GPU'),
          409: problemResponse('the GPU has no stored result yet'),
          415: problemResponse('body is not application/json'),
          503: problemResponse('no analysis on this daemon (no measurement backend)'),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      const outcome = await app.topology.reanalyse(id);
      switch (outcome.kind) {
        case 'reanalysed': {
          const { kind: _kind, ...rest } = outcome;
          return { ...rest, topologyUrl: `/v1/gpus/${outcome.gpuUuid}/topology` };
        }
        case 'no-result':
          throw new ConflictError(`GPU "${id}": ${outcome.reason}; probe it first (POST /v1/gpus/${id}/probe).`);
        case 'no-backend':
          throw new NoBackendError(outcome.reason);
        case 'unknown':
          throw unknownGpu(id);
      }
    },
  );
};

export default reanalysisRoutes;
