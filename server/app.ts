/**
 * Composes the HTTP application: plugins, then routes. Never listens —
 * server/main.ts owns the logger, timeouts, graceful close and `listen`.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import eventRoutes from './api/events.js';
import fitRoutes from './api/fit.js';
import trafficRoutes from './api/traffic.js';
import gpuRoutes from './api/gpus.js';
import healthRoutes from './api/health.js';
import pictureRoutes from './api/picture.js';
import jobRoutes from './api/jobs.js';
import metricsRoutes from './api/metrics.js';
import nodeRoutes from './api/node.js';
import reanalysisRoutes from './api/reanalysis.js';
import { API_PREFIX } from './api/links.js';
import topologyRoutes from './api/topology.js';
import uiRoutes from './api/ui.js';
import type { Config } from './config.js';
import adminAuth from './plugins/admin-auth.js';
import openapi from './plugins/openapi.js';
import connectionLimits, { TIMEOUT_CHECK_MS, type ConnectionLimits } from './plugins/connection-limits.js';
import jsonBody from './plugins/json-body.js';
import problems, { clientErrorHandler, sendProblem } from './plugins/problems.js';
import requestLog, { quietReadsLogController, requestForLog } from './plugins/request-log.js';
import strictValidation, { STRICT_SCHEMA_CONTROLLER } from './plugins/strict-validation.js';
import sharedSchemas from './plugins/shared-schemas.js';
import topologyPlugin from './plugins/topology.js';
import type { TopologyApi } from './model/topology-api.js';
import type { PollSource } from './faces/metrics.js';
import { MAX_PARAM_LENGTH } from './model/api-schema.js';

export interface AppDeps {
  config: Pick<Config, 'adminToken' | 'bodyLimitBytes'> & Partial<ConnectionLimits> & Partial<Pick<Config, 'hwlocEnv'>>;
  topology: TopologyApi;
  /** A pino logger to derive from, `true` for a default JSON logger at info, false/absent for none. */
  logger?: Logger | boolean;
  version: string;
  /** SSE heartbeat period; tests shorten it. */
  sseHeartbeatMs?: number;
  /** The NVML poller, for the poll-duration and poll-failure metrics (absent: those series stay at zero). */
  nvmlPoller?: PollSource | null;
}

/** Credentials never reach a log line, whatever logger the caller passes. */
export const REDACTED_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'req.headers["proxy-authorization"]'];

function appLogger(logger: AppDeps['logger']): Logger | null {
  if (logger === undefined || logger === false) return null;
  const base = logger === true ? pino({ level: 'info' }) : logger;
  // A silent logger still costs a child logger per request; skip it entirely.
  if (base.level === 'silent') return null;
  return base.child({}, { redact: { paths: REDACTED_PATHS, censor: '[Redacted]' }, serializers: { req: requestForLog } });
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const loggerInstance = appLogger(deps.logger);
  const app = Fastify({
    ...(loggerInstance === null ? { logger: false } : { loggerInstance }),
    bodyLimit: deps.config.bodyLimitBytes,
    // Requests past their header or request timeout are found within this (Node's default: 30 s late).
    http: { connectionsCheckingInterval: TIMEOUT_CHECK_MS },
    // Unknown body fields are an error (a typo like "forse" must not be ignored), not silently dropped.
    ajv: { customOptions: { removeAdditional: false } },
    requestIdHeader: 'x-request-id',
    // The problems plugin answers during shutdown instead, as problem+json.
    return503OnClosing: false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, ignoreTrailingSlash: true },
    // Errors raised while routing, before any handler exists, take the same problem+json path.
    frameworkErrors: (error, request, reply) => sendProblem(error, request, reply),
    // …and so do errors of the HTTP parser, before any request exists (server/plugins/problems.ts).
    clientErrorHandler,
    // Bodies validated without type coercion (server/plugins/strict-validation.ts).
    schemaController: STRICT_SCHEMA_CONTROLLER,
    // Reads are logged at debug by the request-log plugin; fastify's info lines stay for the rest.
    logController: quietReadsLogController(),
  }) as unknown as FastifyInstance;

  // Only JSON bodies are accepted: anything else is 415, not a string to validate.
  app.removeContentTypeParser('text/plain');

  await app.register(problems);
  await app.register(jsonBody);
  await app.register(connectionLimits, deps.config);
  await app.register(strictValidation);
  await app.register(requestLog);
  await app.register(topologyPlugin, { topology: deps.topology });
  await app.register(adminAuth, { adminToken: deps.config.adminToken });
  await app.register(sharedSchemas);
  await app.register(openapi, { version: deps.version });

  await app.register(healthRoutes, { version: deps.version });
  await app.register(metricsRoutes, { poller: deps.nvmlPoller ?? null });
  await app.register(uiRoutes);
  await app.register(
    async (v1) => {
      await v1.register(gpuRoutes);
      await v1.register(reanalysisRoutes);
      await v1.register(topologyRoutes);
      await v1.register(fitRoutes);
      await v1.register(trafficRoutes);
      await v1.register(pictureRoutes);
      await v1.register(jobRoutes);
      await v1.register(nodeRoutes, { nvml: deps.nvmlPoller ?? null, ...(deps.config.hwlocEnv ? { hwlocEnv: deps.config.hwlocEnv } : {}) });
      await v1.register(eventRoutes, deps.sseHeartbeatMs === undefined ? {} : { heartbeatMs: deps.sseHeartbeatMs });
    },
    { prefix: API_PREFIX },
  );
  return app;
}
