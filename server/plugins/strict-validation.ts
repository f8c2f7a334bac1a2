/**
 * Validation as the contract says, with no guessing:
 * - request bodies are validated without type coercion (`{"force":"true"}`,
 *   `{"force":1}` and `{"only":"l1"}` are 400s, not `true` and `["l1"]`);
 *   path and query parameters, which arrive as strings, keep fastify's
 *   coercion to their declared types;
 * - a query parameter a route does not declare is a 400 (`?staet=failed`
 *   used to return unfiltered results). Every API route's querystring
 *   schema is closed (`additionalProperties: false`), routes without one get
 *   an empty closed one, and /openapi.json says so.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyServerOptions, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';

type RouteSchema = { httpPart?: string } & Record<string, unknown>;
type Validator = (routeSchema: RouteSchema) => unknown;
type Pool = (externalSchemas: unknown, options: unknown) => Validator;

const pool = AjvCompiler() as unknown as Pool;

/** fastify's own ajv compiler, once coercing (params, query, headers) and once not (bodies). */
function buildValidator(externalSchemas: unknown, ajvOptions: unknown): Validator {
  const options = (ajvOptions ?? {}) as { customOptions?: Record<string, unknown> };
  const customOptions = options.customOptions ?? {};
  const coercing = pool(externalSchemas, { ...options, customOptions });
  const strict = pool(externalSchemas, { ...options, customOptions: { ...customOptions, coerceTypes: false } });
  return (routeSchema) => (routeSchema.httpPart === 'body' ? strict(routeSchema) : coercing(routeSchema));
}

/** For `Fastify({ schemaController })` in app.ts. */
export const STRICT_SCHEMA_CONTROLLER = { compilersFactory: { buildValidator } } as unknown as FastifyServerOptions['schemaController'];

/** Routes whose query strings are closed: the API and health, not /docs (swagger-ui's static files) or /metrics. */
const CLOSED_QUERY = /^(\/v1\/|\/healthz$|\/readyz$)/;

function closeQuery(route: RouteOptions): void {
  if (!CLOSED_QUERY.test(route.url)) return;
  const schema = (route.schema ?? {}) as Record<string, unknown>;
  const query = schema['querystring'] as Record<string, unknown> | undefined;
  if (query && query['additionalProperties'] !== undefined) return;
  route.schema = { ...schema, querystring: query ? { ...query, additionalProperties: false } : { type: 'object', properties: {}, additionalProperties: false } };
}

export default fp(
  async (app) => {
    app.addHook('onRoute', closeQuery);
  },
  { name: 'topod-strict-validation' },
);
