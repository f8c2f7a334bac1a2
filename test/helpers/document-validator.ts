/**
 * Validates topology documents against the schemas /openapi.json serves
 * (GpuTopologyDocument, MigInstanceTopologyDocument), with ajv as fastify
 * ships it: what a client generating code from the contract would accept.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { GpuTopologyDocumentSchema, MigInstanceTopologyDocumentSchema } from '../../server/model/document-schema.js';

// ajv-formats is CommonJS: its default export arrives as the module object under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv,
) => Ajv;

/** Strict: an unknown keyword in the schemas is an error, not silently ignored. */
const ajv = addFormats(new Ajv({ allErrors: true, strict: true }));
ajv.addSchema(GpuTopologyDocumentSchema);
ajv.addSchema(MigInstanceTopologyDocumentSchema);

const compiled = (id: string): ValidateFunction => {
  const validate = ajv.getSchema(id);
  if (!validate) throw new Error(`schema ${id} not registered`);
  return validate;
};

export type DocumentKind = 'GpuTopologyDocument' | 'MigInstanceTopologyDocument';

/** The errors `document` has against the schema, as "path: message" lines; [] when valid. */
export function documentErrors(kind: DocumentKind, document: unknown): string[] {
  const validate = compiled(kind);
  if (validate(document)) return [];
  return (validate.errors ?? []).map(
    (e: ErrorObject) =>
      `${e.instancePath || '/'}: ${e.message ?? e.keyword}${e.keyword === 'additionalProperties' ? ` (${String(e.params.additionalProperty)})` : ''}`,
  );
}

/**
 * The same check against the schemas as /openapi.json publishes them (after
 * @fastify/swagger moved every part under components/schemas): what a client
 * generating code from the served document would accept.
 */
export function publishedDocumentErrors(spec: {
  components: { schemas: Record<string, unknown> };
}): (kind: DocumentKind, document: unknown) => string[] {
  // Not strict: the OpenAPI document around the schemas has keywords JSON Schema does not know.
  const published = addFormats(new Ajv({ allErrors: true, strict: false }));
  published.addSchema({ $id: 'openapi.json', components: spec.components });
  return (kind, document) => {
    const validate = published.getSchema(`openapi.json#/components/schemas/${kind}`);
    if (!validate) throw new Error(`/openapi.json has no components/schemas/${kind}`);
    if (validate(document)) return [];
    return (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '/'}: ${e.message ?? e.keyword}`);
  };
}
