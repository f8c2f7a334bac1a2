/**
 * Validation as the contract says, with no guessing:
 * - request bodies are validated without type coercion (`{"force":"true"}`,
 *   `{"force":1}` and `{"only":"l1"}` are 400s, not `true` and `["l1"]`);
 *   path and query parameters, which arrive as strings, keep fastify's
 *   coercion to their declared types;
 * - a query parameter a route does not declare is a 400 (`?staet=failed`
 *   used to return unfiltered results). Every API route's querystring
 *   schema is closed (`additionalProperties: false`), routes without one get
 *   an empty closed one, and /openapi.json says so;
 * - an integer in a path or query is written in decimal digits: ajv's
 *   coercion took `0x10` as 16 and `1e400` or `Infinity` as a number, which
 *   reached SQLite ("datatype mismatch") or the serializer as a 500.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyReply, FastifyRequest, FastifyServerOptions, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { ValidationError } from '../errors.js';
import { cachedSerializers } from './serializer-cache.js';

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

/** For `Fastify({ schemaController })` in app.ts (with response serialisers built once per schema: ./serializer-cache.ts). */
export const STRICT_SCHEMA_CONTROLLER = {
  compilersFactory: { buildValidator, buildSerializer: cachedSerializers() },
} as unknown as FastifyServerOptions['schemaController'];

/** Routes whose query strings are closed: the API and health, not /docs (swagger-ui's static files) or /metrics. */
const CLOSED_QUERY = /^(\/v1\/|\/healthz$|\/readyz$)/;

function closeQuery(route: RouteOptions): void {
  if (!CLOSED_QUERY.test(route.url)) return;
  const schema = (route.schema ?? {}) as Record<string, unknown>;
  const query = schema['querystring'] as Record<string, unknown> | undefined;
  if (query && query['additionalProperties'] !== undefined) return;
  route.schema = {
    ...schema,
    querystring: query ? { ...query, additionalProperties: false } : { type: 'object', properties: {}, additionalProperties: false },
  };
}

/** A decimal integer as a client writes one: optional minus, digits, no more than a safe integer holds. */
const DECIMAL_INTEGER = /^-?\d{1,15}$/;

type IntegerFields = { part: 'params' | 'querystring'; names: string[] };

const isIntegerSchema = (schema: unknown): boolean => {
  const node = (schema ?? {}) as { type?: unknown; anyOf?: unknown[] };
  return node.type === 'integer' || (Array.isArray(node.type) && node.type.includes('integer')) || (node.anyOf ?? []).some(isIntegerSchema);
};

function integerFields(route: RouteOptions): IntegerFields[] {
  const schema = (route.schema ?? {}) as Record<string, { properties?: Record<string, unknown> } | undefined>;
  return (['params', 'querystring'] as const)
    .map((part) => ({
      part,
      names: Object.entries(schema[part]?.properties ?? {})
        .filter(([, field]) => isIntegerSchema(field))
        .map(([name]) => name),
    }))
    .filter((fields) => fields.names.length > 0);
}

/** A preValidation hook refusing integers written otherwise than in decimal (before ajv coerces them). */
function decimalIntegersOnly(fields: IntegerFields[]) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    for (const { part, names } of fields) {
      const values = (part === 'params' ? request.params : request.query) as Record<string, unknown>;
      for (const name of names) {
        const raw = values?.[name];
        if (raw === undefined) continue;
        if ([raw].flat().every((value) => typeof value === 'string' && DECIMAL_INTEGER.test(value))) continue;
        const message = `must be an integer in decimal digits (got ${JSON.stringify(String(raw)).slice(0, 40)})`;
        throw new ValidationError(`${part}/${name} ${message}`, { extensions: { errors: [{ in: part, pointer: `/${name}`, message }] } });
      }
    }
  };
}

function checkIntegers(route: RouteOptions): void {
  const fields = integerFields(route);
  if (fields.length === 0) return;
  route.preValidation = [decimalIntegersOnly(fields), ...[route.preValidation ?? []].flat()] as RouteOptions['preValidation'];
}

export default fp(
  async (app) => {
    app.addHook('onRoute', closeQuery);
    app.addHook('onRoute', checkIntegers);
  },
  { name: 'topod-strict-validation' },
);
