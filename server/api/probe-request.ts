/**
 * The probe request body (POST /v1/gpus/{id}/probe) as this build accepts it:
 * the model's schema over the elements and opt-in families some discovery
 * strategy measures, and the validation message that names them.
 */
import { PROBE_TARGETS } from '../discovery/registry.js';
import { probeRequestBodySchema } from '../model/gpu-schema.js';

export const ProbeRequestBodySchema = probeRequestBodySchema(PROBE_TARGETS);

interface SchemaIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
}

/**
 * The probe body's validation message (fastify's wording, `body/force must be
 * boolean`), except that an `only` entry no strategy measures — an unknown
 * name or a known element like "texture" — says which elements can be measured.
 */
export function probeBodyErrorFormatter(errors: readonly SchemaIssue[], dataVar: string): Error {
  const text = errors.map((issue) => {
    const where = `${dataVar}${issue.instancePath ?? ''}`;
    if (issue.keyword === 'enum' && /^\/only\/\d+$/.test(issue.instancePath ?? '')) {
      return `${where} is not an element a probe can measure: use one of ${PROBE_TARGETS.join(', ')}`;
    }
    return `${where} ${issue.message ?? 'is invalid'}`;
  });
  return new Error(text.join(', '));
}
