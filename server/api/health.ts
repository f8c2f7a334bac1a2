/** GET /healthz (liveness) and GET /readyz (readiness from topology.health()). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { NotReadyError } from '../errors.js';
import { jsonResponse, problemResponse } from '../model/api-schema.js';
import { LivenessSchema, ReadinessSchema } from '../model/health-schema.js';

export interface HealthRoutesOptions {
  version: string;
}

const healthRoutes: FastifyPluginAsyncTypebox<HealthRoutesOptions> = async (app, options) => {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['health'],
        operationId: 'liveness',
        summary: 'Liveness: 200 while the process serves',
        response: { 200: jsonResponse('alive', LivenessSchema) },
      },
    },
    async () => ({ status: 'ok' as const, version: options.version }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        operationId: 'readiness',
        summary: 'Readiness: store open, GPUs enumerated, …',
        response: {
          200: jsonResponse('ready, with each check', ReadinessSchema),
          503: problemResponse(`not ready (code ${NotReadyError.code}); \`checks\` says which check failed`),
        },
      },
    },
    async () => {
      const { ready, checks } = app.topology.health();
      if (!ready) {
        const failing = Object.entries(checks)
          .filter(([, check]) => !check.ok)
          .map(([name, check]) => `${name}: ${check.detail}`);
        throw new NotReadyError(failing.length > 0 ? `Not ready: ${failing.join('; ')}.` : 'Not ready.', { extensions: { checks } });
      }
      return { status: 'ready' as const, checks };
    },
  );
};

export default healthRoutes;
