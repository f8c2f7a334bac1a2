/**
 * Registers the schemas routes reference with sharedRef(): validation and
 * serialisation resolve them by $id, and OpenAPI lists each once under
 * components/schemas. Register before the routes.
 */
import fp from 'fastify-plugin';
import { PROBLEM_CODES } from '../errors.js';
import { problemSchema } from '../model/api-schema.js';
import { GpuTopologyDocumentSchema, MigInstanceTopologyDocumentSchema } from '../model/document-schema.js';
import { GpuSummarySchema, MigDeviceSummarySchema } from '../model/gpu-schema.js';
import { ProbeJobSchema } from '../model/job-schema.js';
import { ReanalysisSchema } from '../model/reanalysis-schema.js';

/** The problem document, its `code` an enum of every code the API answers with. */
export const ProblemSchema = problemSchema(PROBLEM_CODES);

export const SHARED_SCHEMAS = [
  ProblemSchema,
  GpuSummarySchema,
  MigDeviceSummarySchema,
  ProbeJobSchema,
  GpuTopologyDocumentSchema,
  MigInstanceTopologyDocumentSchema,
  ReanalysisSchema,
];

export default fp(
  async (app) => {
    for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  },
  { name: 'topod-shared-schemas' },
);
