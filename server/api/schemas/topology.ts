/**
 * The topology document as served. The body is pre-serialised by the topology
 * service (server/topology/merge.ts), so this schema documents it and is never
 * used to serialise. Nested parts owned elsewhere (device properties, NVML
 * state, the MIG view) are described loosely so they can grow.
 */
import { Type } from '@sinclair/typebox';
import { sharedRef } from './common.js';

const Loose = (description: string) => Type.Object({}, { additionalProperties: true, description });

const ElementsSchema = Type.Record(
  Type.String(),
  Loose('one memory element: size, latency {mean, p50, p95, stdev}, lineSize, fetchGranularity, amount, segmentSize, sharedWith, bandwidths, missPenalty; each value with unit, source and confidence'),
  { description: 'keyed by element name: l1, l2, texture, readOnly, constantL1, constantL15, shared, deviceMemory (NVIDIA); vL1, sL1d, l3, lds (AMD)' },
);

const DynamicSchema = Loose('stable part of the live NVML state: available, reason, driverVersion, device (PCIe, NUMA, NVLink, clocks…)');

export const GpuTopologyDocumentSchema = Type.Object(
  {
    schemaVersion: Type.Integer({ minimum: 1 }),
    gpu: Type.Object({ uuid: Type.String(), name: Type.String() }, { additionalProperties: true }),
    simulated: Type.Boolean({ description: 'true when the simulated GPU produced the measurements' }),
    probe: Loose('which probe produced it: probe and analysis versions, driver, timings, job'),
    device: Loose('device properties as the runtime reported them (source "api")'),
    clock: Type.Union([Loose('SM clock and clock-read overhead used to convert cycles'), Type.Null()]),
    elements: ElementsSchema,
    warnings: Type.Array(Type.String()),
    status: Loose('probe status of the GPU: probeStatus, stale, staleReason, activeJob, present'),
    dynamic: DynamicSchema,
    mig: Type.Union([Loose('MIG view: mode, memory slices, L2 size and segment, profiles and instances with their L2 share'), Type.Null()], {
      description: 'null when NVML is not available',
    }),
  },
  { $id: 'GpuTopologyDocument', additionalProperties: true, description: 'a whole GPU: measured topology merged with live NVML/MIG state' },
);

export const MigInstanceTopologyDocumentSchema = Type.Object(
  {
    schemaVersion: Type.Integer({ minimum: 1 }),
    kind: Type.Literal('mig-instance'),
    migDeviceUuid: Type.String(),
    parent: Loose('the parent GPU: uuid, name, probe, status'),
    simulated: Type.Boolean(),
    instance: Loose('the GPU instance: SMs, memory, placement, compute instances, L2 share'),
    elements: ElementsSchema,
    dynamic: DynamicSchema,
  },
  {
    $id: 'MigInstanceTopologyDocument',
    additionalProperties: true,
    description: 'a MIG device: per-SM caches from the parent probe, L2 and memory sized to the instance',
  },
);

export const TopologyDocumentSchema = Type.Union([sharedRef(GpuTopologyDocumentSchema), sharedRef(MigInstanceTopologyDocumentSchema)], {
  description: 'asked by GPU index or UUID: the GPU document; by MIG device UUID: the MIG instance document',
});
