/** GET /v1/gpus, GET /v1/gpus/{id}, POST /v1/gpus/{id}/probe. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { ConflictError, NoBackendError, NotFoundError } from '../errors.js';
import { LinkHeaderSchema, jsonResponse, problemResponse } from '../model/api-schema.js';
import { GpuListSchema, GpuOrMigDeviceSchema, GpuParamsSchema } from '../model/gpu-schema.js';
import { ProbeJobSchema } from '../model/job-schema.js';
import { eagerSerializerCompiler } from '../plugins/eager-serializers.js';
import { BEARER_SECURITY } from '../plugins/admin-auth.js';
import { OPTIONAL_BODY_MARKER } from '../plugins/openapi.js';
import { jobExtensions, jobLinkHeader, jobPath } from './links.js';
import { ProbeRequestBodySchema, probeBodyErrorFormatter } from './probe-request.js';

export function unknownGpu(id: string): InstanceType<typeof NotFoundError> {
  return new NotFoundError(`No GPU "${id}": use an index, a GPU UUID or a MIG device UUID listed by GET /v1/gpus.`);
}

/** fastify validates an absent body as null; the probe (and re-analysis) body is optional, so absent means {}. */
export async function defaultEmptyBody(request: FastifyRequest): Promise<void> {
  if (request.body === undefined) request.body = {};
}

const gpuRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/gpus',
    {
      serializerCompiler: eagerSerializerCompiler,
      schema: {
        tags: ['gpus'],
        operationId: 'listGpus',
        summary: 'List GPUs with their probe status',
        response: { 200: jsonResponse('every GPU seen, present or not', GpuListSchema) },
      },
    },
    async () => ({ gpus: app.topology.listGpus() }),
  );

  app.get(
    '/gpus/:id',
    {
      serializerCompiler: eagerSerializerCompiler,
      schema: {
        tags: ['gpus'],
        operationId: 'getGpu',
        summary: 'One GPU by index or GPU UUID, or one MIG device by its UUID',
        description:
          'A MIG device UUID answers the MIG device itself (kind "mig-device": its GPU and compute instance, profile, SMs, memory and L2 share), not its parent GPU.',
        params: GpuParamsSchema,
        response: {
          200: jsonResponse('the GPU, or the MIG device', GpuOrMigDeviceSchema),
          404: problemResponse('no such GPU or MIG device'),
        },
      },
    },
    async (request) => {
      const gpu = app.topology.getMigDevice(request.params.id) ?? app.topology.getGpu(request.params.id);
      if (gpu === null) throw unknownGpu(request.params.id);
      return gpu;
    },
  );

  app.post(
    '/gpus/:id/probe',
    {
      // Before the body is read: an unauthorised client learns nothing about the body schema.
      onRequest: app.requireAdmin,
      preValidation: defaultEmptyBody,
      schemaErrorFormatter: probeBodyErrorFormatter,
      schema: {
        [OPTIONAL_BODY_MARKER]: true,
        tags: ['gpus'],
        operationId: 'probeGpu',
        summary: 'Queue a (re-)probe of one GPU',
        description: 'Needs the admin bearer token, or a loopback client when none is configured.',
        security: BEARER_SECURITY,
        params: GpuParamsSchema,
        body: ProbeRequestBodySchema,
        response: {
          202: {
            ...jsonResponse('queued; watch the job at Location', ProbeJobSchema),
            headers: { location: Type.String({ description: 'the job: /v1/jobs/{jobId}' }) },
          },
          400: problemResponse('invalid body (an element no strategy measures, an unknown field)'),
          401: problemResponse('admin token missing or wrong'),
          403: problemResponse('no admin token configured and the client is not loopback'),
          404: problemResponse('no such GPU'),
          409: { ...problemResponse('a probe of this GPU is already queued or running (see jobUrl)'), headers: { link: LinkHeaderSchema } },
          413: problemResponse('body larger than TOPOD_BODY_LIMIT_BYTES'),
          415: problemResponse('body is not application/json'),
          503: problemResponse('no measurement backend on this daemon'),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const outcome = app.topology.requestProbe(id, {
        only: request.body.only ?? null,
        force: request.body.force ?? false,
        evenIfBusy: request.body.evenIfBusy ?? false,
        requestedBy: `api:${request.ip}`,
      });
      switch (outcome.kind) {
        case 'queued':
          return reply.code(202).header('location', jobPath(outcome.job.id)).send(outcome.job);
        case 'conflict':
          throw new ConflictError(
            `GPU "${id}" already has probe job ${outcome.job.id} ${outcome.job.state}; watch it or retry when it ends.`,
            {
              extensions: jobExtensions(outcome.job),
              headers: { link: jobLinkHeader(outcome.job.id) },
            },
          );
        case 'unknown':
          throw unknownGpu(id);
        case 'no-backend':
          throw new NoBackendError(outcome.reason);
      }
    },
  );
};

export default gpuRoutes;
