/**
 * A response serialiser compiler for the routes that dashboards and the
 * bench poll while probes run (GPUs, jobs). fast-json-stringify serialises
 * an anyOf (every nullable field) through an ajv validator, which it compiles
 * lazily, at the first answer that reaches that branch: 10-30 ms on the event
 * loop, at the first GPU listed and again when a probe's result turns a null
 * into a value, so answers to every client wait (issue 17.5's bench caught it
 * on the H100). These routes compile their validators with the route instead,
 * at boot. Not every route does: for all of them that added 1.2 s to boot.
 */
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';
import { cachedSerializers } from './serializer-cache.js';
import { SHARED_SCHEMAS } from './shared-schemas.js';

const sharedSchemas = Object.fromEntries(SHARED_SCHEMAS.map((schema) => [schema.$id, schema]));

const compile = cachedSerializers()(sharedSchemas, { compileValidators: true });

/** fastify asks for a response schema's serialiser (httpStatus is always set for response schemas). */
export const eagerSerializerCompiler: FastifySerializerCompiler<unknown> = (route) =>
  compile({ ...route, httpStatus: route.httpStatus ?? '200' });
