/** GET /v1/jobs/{jobId}, GET /v1/jobs. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { NotFoundError } from '../errors.js';
import { roundedJob } from './events.js';
import { unknownGpu } from './gpus.js';
import { jsonResponse, problemResponse } from './schemas/common.js';
import { DEFAULT_JOB_LIMIT, JobListSchema, JobParamsSchema, JobQuerySchema, ProbeJobSchema } from './schemas/job.js';

const jobRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/jobs/:jobId',
    {
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
      schema: {
        tags: ['jobs'],
        operationId: 'listJobs',
        summary: 'Probe jobs, newest first',
        querystring: JobQuerySchema,
        response: {
          200: jsonResponse('matching jobs', JobListSchema),
          400: problemResponse('bad filter (unknown state, limit out of range)'),
          404: problemResponse('the gpu filter names no known GPU'),
        },
      },
    },
    async (request) => {
      const { gpu, state, limit } = request.query;
      if (gpu !== undefined && app.topology.getGpu(gpu) === null) throw unknownGpu(gpu);
      return { jobs: app.topology.listJobs({ gpu, state, limit: limit ?? DEFAULT_JOB_LIMIT }).map(roundedJob) };
    },
  );
};

export default jobRoutes;
