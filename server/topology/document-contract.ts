/**
 * Compile-time checks (no code runs; `tsc` fails on a drift) that what the
 * builders return is exactly what the served schemas describe
 * (server/model/document-schema.ts), and that the MIG view's copies of NVML's
 * records have the schema's fields.
 *
 * Identical is stricter than mutual assignability, which lets either side
 * carry an extra *optional* field that would slip through a closed
 * (additionalProperties: false) schema's type check and then fail at
 * validation. It compares the deep shapes, property by property, optional
 * markers included; intersections are flattened first, so `A & { b: B }` and
 * the same fields written out are identical.
 */
import type { Static } from '@sinclair/typebox';
import type { MigComputeInstanceInfo, MigInstanceInfo, MigProfileInfo } from '../dynamic/types.js';
import type { GpuTopologyDocumentSchema, MigInstanceTopologyDocumentSchema, ResultDocumentSchema } from '../model/document-schema.js';
import type { MigComputeInstanceView, MigInstanceView, MigProfileView, MigView } from '../model/document.js';
import type { buildResultDocument } from '../results/result-document.js';
import type { MergedTopology, mergeMigInstance } from './merge.js';
import type { buildMigView } from './mig.js';

type Shape<T> = T extends readonly (infer U)[] ? Shape<U>[] : T extends object ? { [K in keyof T]: Shape<T[K]> } : T;

export type Identical<A, B> = (<T>() => T extends Shape<A> ? 1 : 2) extends <T>() => T extends Shape<B> ? 1 : 2 ? true : false;

/** Compiles only when T is `true`. */
type Holds<T extends true> = T;

export type DocumentContract = [
  // What the builders return is exactly what the schemas describe.
  Holds<Identical<Static<typeof ResultDocumentSchema>, ReturnType<typeof buildResultDocument>>>,
  Holds<Identical<Static<typeof GpuTopologyDocumentSchema>, MergedTopology>>,
  Holds<Identical<Static<typeof MigInstanceTopologyDocumentSchema>, NonNullable<ReturnType<typeof mergeMigInstance>>>>,
  Holds<Identical<MigView, ReturnType<typeof buildMigView>>>,
  // The MIG view copies NVML's profiles, instances and compute instances: their fields must be the schema's.
  Holds<Identical<Omit<MigProfileView, 'l2' | 'clusters'>, MigProfileInfo>>,
  Holds<
    Identical<Omit<MigInstanceView, 'profileName' | 'computeInstances' | 'l2' | 'clusters'>, Omit<MigInstanceInfo, 'computeInstances'>>
  >,
  Holds<Identical<MigComputeInstanceView, Required<MigComputeInstanceInfo>>>,
];
