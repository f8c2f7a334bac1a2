/**
 * The topology document as served. The body is pre-serialised by the topology
 * service (server/topology/merge.ts), so these schemas document it and are
 * never used to serialise; the tests validate served bodies against them.
 * The schemas themselves belong to the model (server/model/document-schema.ts),
 * whose types the builders return: the checks below fail `tsc` on any drift,
 * an extra optional field included (Identical, not Equivalent).
 */
import { Type, type Static } from '@sinclair/typebox';
import type { MigComputeInstanceInfo, MigInstanceInfo, MigProfileInfo } from '../../dynamic/types.js';
import { sharedRef } from '../../model/api-schema.js';
import type { buildResultDocument } from '../../results/result-document.js';
import { GpuTopologyDocumentSchema, MigInstanceTopologyDocumentSchema, ResultDocumentSchema } from '../../model/document-schema.js';
import type { MigComputeInstanceView, MigInstanceView, MigProfileView, MigView } from '../../model/document.js';
import type { MergedTopology, mergeMigInstance } from '../../topology/merge.js';
import type { buildMigView } from '../../topology/mig.js';
import type { Identical } from './identical.js';

export { GpuTopologyDocumentSchema, MigInstanceTopologyDocumentSchema };

export const TopologyDocumentSchema = Type.Union([sharedRef(GpuTopologyDocumentSchema), sharedRef(MigInstanceTopologyDocumentSchema)], {
  description: 'asked by GPU index or UUID: the GPU document; by MIG device UUID: the MIG instance document',
});

// What the builders return is exactly what the schemas describe.
const resultDocumentMatches: Identical<Static<typeof ResultDocumentSchema>, ReturnType<typeof buildResultDocument>> = true;
const gpuDocumentMatches: Identical<Static<typeof GpuTopologyDocumentSchema>, MergedTopology> = true;
const migDocumentMatches: Identical<Static<typeof MigInstanceTopologyDocumentSchema>, NonNullable<ReturnType<typeof mergeMigInstance>>> = true;
const migViewMatches: Identical<MigView, ReturnType<typeof buildMigView>> = true;
// The MIG view copies NVML's profiles, instances and compute instances: their fields must be the schema's.
const migProfileMatches: Identical<Omit<MigProfileView, 'l2' | 'clusters'>, MigProfileInfo> = true;
const migInstanceMatches: Identical<Omit<MigInstanceView, 'profileName' | 'computeInstances' | 'l2' | 'clusters'>, Omit<MigInstanceInfo, 'computeInstances'>> = true;
const migComputeInstanceMatches: Identical<MigComputeInstanceView, Required<MigComputeInstanceInfo>> = true;
void [resultDocumentMatches, gpuDocumentMatches, migDocumentMatches, migViewMatches, migProfileMatches, migInstanceMatches, migComputeInstanceMatches];
