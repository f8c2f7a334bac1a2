/**
 * The topology document as served. The body is pre-serialised by the topology
 * service, so this schema documents it and is never used to serialise; the
 * merged parts (dynamic NVML state, MIG view) are owned elsewhere and described
 * loosely.
 */
import { Type } from '@sinclair/typebox';

const Loose = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const TopologyDocumentSchema = Type.Object(
  {
    schemaVersion: Type.Integer({ minimum: 1 }),
    gpu: Type.Object({ uuid: Type.String(), name: Type.String() }, { additionalProperties: true }),
    simulated: Type.Boolean(),
    probe: Loose('which probe produced it: versions, driver, timings, job'),
    device: Loose('device properties as the runtime reported them (source "api")'),
    elements: Type.Record(Type.String(), Loose('one memory element: size, latency, lineSize, amount, bandwidths… each with value, unit, source, confidence'), {
      description: 'keyed by element name (l1, l2, texture, readOnly, constantL1, constantL15, shared, deviceMemory, …)',
    }),
    mig: Type.Optional(Type.Union([Loose('MIG view: mode, GPU instances with SMs, memory and L2 share, profiles'), Type.Null()])),
    warnings: Type.Array(Type.String()),
  },
  { additionalProperties: true, description: 'measured topology merged with live NVML/MIG state' },
);
