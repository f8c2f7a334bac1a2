/**
 * The topology document as served. The body is pre-serialised by the topology
 * service (server/topology/merge.ts), so these schemas document it and are
 * never used to serialise; the tests validate served bodies against them.
 * The documents' own schemas are ./document-schema.ts; that what the builders
 * return is exactly what they describe is checked in
 * server/topology/document-contract.ts.
 */
import { Type } from '@sinclair/typebox';
import { sharedRef } from './api-schema.js';
import { GpuTopologyDocumentSchema, MigInstanceTopologyDocumentSchema } from './document-schema.js';

export const TopologyDocumentSchema = Type.Union([sharedRef(GpuTopologyDocumentSchema), sharedRef(MigInstanceTopologyDocumentSchema)], {
  description: 'asked by GPU index or UUID: the GPU document; by MIG device UUID: the MIG instance document',
});
