/**
 * TypeBox building blocks for the document's schemas; the routes' own
 * (parameter limits, problem and response entries) are in ./api-schema.ts.
 */
import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';

/** A string enum as plain JSON Schema `enum` (reads better in OpenAPI than anyOf of consts). */
export function StringEnum<T extends string>(values: readonly T[], options: { description?: string } = {}): TUnsafe<T> {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
}

/** `T | null`, described as a whole. */
export const Nullable = <T extends TSchema>(schema: T, options: { description?: string } = {}) =>
  Type.Union([schema, Type.Null()], options);

export const Timestamp = (description: string) => Type.String({ format: 'date-time', description });

/** Byte counts, clock rates and other non-negative whole numbers. */
export const Count = (description?: string) => Type.Integer({ minimum: 0, ...(description === undefined ? {} : { description }) });

/**
 * A named part of the document: the schema itself sits once under the
 * document's `$defs` (see withDefs), every use is a `$ref` to its `$id`, so
 * OpenAPI lists it once under components/schemas and code generators name it.
 */
export function partRef<T extends TSchema>(schema: T): TUnsafe<Static<T>> {
  if (typeof schema.$id !== 'string') throw new TypeError('partRef needs a schema with an $id');
  return Type.Unsafe<Static<T>>({ $ref: `${schema.$id}#` });
}
