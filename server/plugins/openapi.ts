/**
 * OpenAPI 3.1 from the route schemas (@fastify/swagger), Swagger UI at /docs
 * and the raw document at /openapi.json. Register before the routes: the
 * document is collected as they are added.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { PROBLEM_TYPE_PREFIX } from '../errors.js';

/**
 * Route-schema flag for a body that may be absent. @fastify/swagger marks
 * every declared body required; the flag (copied as an x- member) undoes that.
 */
export const OPTIONAL_BODY_MARKER = 'x-topod-optional-body';

interface OperationLike {
  [OPTIONAL_BODY_MARKER]?: boolean;
  requestBody?: { required?: boolean };
}

function applyOptionalBodies(document: { paths?: Record<string, Record<string, OperationLike>> }): void {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      if (operation[OPTIONAL_BODY_MARKER] === undefined) continue;
      if (operation.requestBody) operation.requestBody.required = false;
      delete operation[OPTIONAL_BODY_MARKER];
    }
  }
}

export interface OpenApiOptions {
  version: string;
}

export const API_TAGS = [
  { name: 'gpus', description: 'GPUs this daemon knows, and re-probing them' },
  { name: 'topology', description: 'Measured memory topology merged with live MIG state' },
  { name: 'jobs', description: 'Probe jobs' },
  { name: 'events', description: 'Server-Sent Events stream of changes' },
  { name: 'health', description: 'Liveness and readiness' },
  {
    name: 'metrics',
    description: "Prometheus metrics in dcgm-exporter's label conventions: measured sizes, latencies, MIG L2 shares, probe and NVML health",
  },
  { name: 'ui', description: 'The dashboard: GPUs, their pictures, MIG instances and live probe progress' },
];

export default fp<OpenApiOptions>(
  async (app, options) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'topod',
          version: options.version,
          description:
            'GPU topology daemon: each GPU is measured once with microbenchmarks, the result merged with live NVML/MIG state. ' +
            `Every error is an RFC 9457 problem document whose type is ${PROBLEM_TYPE_PREFIX}<slug>.`,
        },
        tags: API_TAGS,
        components: {
          securitySchemes: {
            bearerAuth: {
              type: 'http',
              scheme: 'bearer',
              description: 'TOPOD_ADMIN_TOKEN; without one configured, only loopback clients may mutate',
            },
          },
        },
      },
      // Shared schemas keep their $id as their name under components/schemas.
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
      transformObject: (documentObject) => {
        const document = 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject;
        applyOptionalBodies(document as Parameters<typeof applyOptionalBodies>[0]);
        return document;
      },
    });
    await app.register(swaggerUi, { routePrefix: '/docs' });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'topod-openapi', dependencies: ['topod-shared-schemas'] },
);
