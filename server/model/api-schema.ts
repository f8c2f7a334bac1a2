/**
 * Schema building blocks shared by every resource's routes: parameter limits,
 * nullable strings and timestamps, the RFC 9457 problem document and the
 * response entries that carry it.
 */
import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { StringEnum } from './schema-helpers.js';

/** Longest path parameter the router accepts (GPU and MIG UUIDs are ~40 characters). */
export const MAX_PARAM_LENGTH = 128;

export const NullableString = (options: { description?: string; format?: string } = {}) =>
  Type.Union([Type.String(), Type.Null()], options);

export const TimestampSchema = Type.String({ format: 'date-time' });
export const NullableTimestamp = (description: string) => Type.Union([TimestampSchema, Type.Null()], { description });

const PROBLEM_SCHEMA_ID = 'Problem';

/**
 * The RFC 9457 problem document. `codes` are every code the API may answer
 * with (server/errors.ts: PROBLEM_CODES); they are passed in because the
 * model imports nothing outside itself. server/plugins/shared-schemas.ts
 * registers the one instance.
 */
export function problemSchema<Code extends string>(codes: readonly Code[]) {
  return Type.Object(
    {
      type: Type.String({ description: 'urn:topod:problem:<slug>; the slug mirrors `code`' }),
      title: Type.String(),
      status: Type.Integer({ minimum: 400, maximum: 599 }),
      detail: Type.String(),
      instance: Type.String({ description: 'the request path this problem answers' }),
      code: StringEnum(codes, { description: 'stable error code' }),
    },
    { $id: PROBLEM_SCHEMA_ID, additionalProperties: true, description: 'RFC 9457 problem details; extension members depend on the code' },
  );
}

export type Problem = Static<ReturnType<typeof problemSchema>>;

/**
 * A reference to a schema registered once with app.addSchema (server/plugins/
 * shared-schemas.ts): one definition in OpenAPI components, typed as the schema.
 */
export function sharedRef<T extends TSchema>(schema: T): TUnsafe<Static<T>> {
  if (typeof schema.$id !== 'string') throw new TypeError('sharedRef needs a schema with an $id');
  return Type.Unsafe<Static<T>>({ $ref: `${schema.$id}#` });
}

/** A response entry whose body is a problem document. */
export function problemResponse(description: string) {
  return { description, content: { 'application/problem+json': { schema: Type.Unsafe<Problem>({ $ref: `${PROBLEM_SCHEMA_ID}#` }) } } };
}

/** A JSON response entry with a description (OpenAPI wants one per status); shared schemas go by reference. */
export function jsonResponse<T extends TSchema>(description: string, schema: T) {
  const body = typeof schema.$id === 'string' ? sharedRef(schema) : Type.Unsafe<Static<T>>(schema);
  return { description, content: { 'application/json': { schema: body } } };
}

export const LinkHeaderSchema = Type.String({ description: 'RFC 8288 link to the related resource' });

/** Retry-After on a 503 while the GPU's first probe is pending (with a Link to its job). */
export const RetryAfterHeaderSchema = Type.Integer({ description: 'seconds, while a probe is pending' });
