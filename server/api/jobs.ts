/** GET /v1/jobs/{jobId}, GET /v1/jobs. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { NotFoundError, ValidationError } from '../errors.js';
import { LinkHeaderSchema, jsonResponse, problemResponse } from '../model/api-schema.js';
import { DEFAULT_JOB_LIMIT, JobListSchema, JobParamsSchema, JobQuerySchema, ProbeJobSchema } from '../model/job-schema.js';
import type { JobPosition, JobQuery } from '../model/job.js';
import { eagerSerializerCompiler } from '../plugins/eager-serializers.js';
import { roundedJob } from './events.js';
import { unknownGpu } from './gpus.js';
import { decodeJobCursor, encodeJobCursor } from './job-cursor.js';
import { API_PREFIX } from './links.js';

function positionOf(cursor: string | undefined): JobPosition | null {
  if (cursor === undefined) return null;
  const position = decodeJobCursor(cursor);
  if (position) return position;
  const message = 'is not a cursor this server issued: follow `next` from a GET /v1/jobs answer';
  throw new ValidationError(`querystring/cursor ${message}`, {
    extensions: { errors: [{ in: 'querystring', pointer: '/cursor', message }] },
  });
}

/** The same query (the client's own gpu spelling, state, limit) one page further. */
function nextPagePath(query: JobQuery, next: JobPosition): string {
  const params = new URLSearchParams();
  if (query.gpu !== undefined) params.set('gpu', query.gpu);
  if (query.state !== undefined) params.set('state', query.state);
  params.set('limit', String(query.limit ?? DEFAULT_JOB_LIMIT));
  params.set('cursor', encodeJobCursor(next));
  return `${API_PREFIX}/jobs?${params.toString()}`;
}

const jobRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/jobs/:jobId',
    {
      serializerCompiler: eagerSerializerCompiler,
      schema: {
        tags: ['jobs'],
        operationId: 'getJob',
        summary: 'One probe job',
        params: JobParamsSchema,
        response: { 200: jsonResponse('the job', ProbeJobSchema), 404: problemResponse('no such job') },
      },
    },
    async (request) => {
      const job = app.topology.getJob(request.params.jobId);
      if (job === null) throw new NotFoundError(`No probe job "${request.params.jobId}".`);
      return roundedJob(job);
    },
  );

  app.get(
    '/jobs',
    {
      serializerCompiler: eagerSerializerCompiler,
      schema: {
        tags: ['jobs'],
        operationId: 'listJobs',
        summary: 'Probe jobs, newest first, a page at a time',
        description: 'At most `limit` jobs (500); `next` (and the Link rel="next" header) gives the following page until the last.',
        querystring: JobQuerySchema,
        response: {
          200: {
            ...jsonResponse('matching jobs', JobListSchema),
            headers: { link: { ...LinkHeaderSchema, description: 'rel="next": the next page, when there is one' } },
          },
          400: problemResponse('bad filter (unknown state, limit out of range) or a malformed cursor'),
          404: problemResponse('the gpu filter names no known GPU'),
        },
      },
    },
    async (request, reply) => {
      const { gpu, state, limit, cursor } = request.query;
      const after = positionOf(cursor);
      if (gpu !== undefined && app.topology.getGpu(gpu) === null) throw unknownGpu(gpu);
      const query = { gpu, state, limit: limit ?? DEFAULT_JOB_LIMIT };
      const page = app.topology.listJobPage(query, after);
      const next = page.next ? nextPagePath(query, page.next) : null;
      if (next) reply.header('link', `<${next}>; rel="next"`);
      return { jobs: page.jobs.map(roundedJob), next };
    },
  );
};

export default jobRoutes;
