/**
 * Schema building blocks shared by every resource: string enums, the RFC 9457
 * problem document and the response entries that carry it.
 */
import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { PROBLEM_CODES } from '../../errors.js';

/** A string enum as plain JSON Schema `enum` (reads better in OpenAPI than anyOf of consts). */
export function StringEnum<T extends string>(values: readonly T[], options: { description?: string } = {}): TUnsafe<T> {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
}

/** Longest path parameter the router accepts (GPU and MIG UUIDs are ~40 characters). */
export const MAX_PARAM_LENGTH = 128;

export const NullableString = (options: { description?: string; format?: string } = {}) => Type.Union([Type.String(), Type.Null()], options);

export const TimestampSchema = Type.String({ format: 'date-time' });
export const NullableTimestamp = (description: string) => Type.Union([TimestampSchema, Type.Null()], { description });

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'urn:topod:problem:<slug>; the slug mirrors `code`' }),
    title: Type.String(),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    detail: Type.String(),
    instance: Type.String({ description: 'the request path this problem answers' }),
    code: StringEnum(PROBLEM_CODES, { description: 'stable error code' }),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem details; extension members depend on the code' },
);

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
  return { description, content: { 'application/problem+json': { schema: sharedRef(ProblemSchema) } } };
}

/** A JSON response entry with a description (OpenAPI wants one per status); shared schemas go by reference. */
export function jsonResponse<T extends TSchema>(description: string, schema: T) {
  const body = typeof schema.$id === 'string' ? sharedRef(schema) : Type.Unsafe<Static<T>>(schema);
  return { description, content: { 'application/json': { schema: body } } };
}

export const LinkHeaderSchema = Type.String({ description: 'RFC 8288 link to the related resource' });
