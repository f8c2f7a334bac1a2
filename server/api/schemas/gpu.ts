/** Schemas of the GPU resource (GpuSummary in server/topology/contracts.ts). */
import { Type, type Static } from '@sinclair/typebox';
import type { GpuSummary } from '../../model/gpu.js';
import { ELEMENT_NAMES } from '../../model/document.js';
import { MAX_PARAM_LENGTH, NullableString, NullableTimestamp, StringEnum, sharedRef } from './common.js';
import type { Equivalent } from './equivalent.js';

export const GPU_PROBE_STATUSES = ['unprobed', 'queued', 'running', 'probed', 'failed'] as const;

export const ElementNameSchema = StringEnum(ELEMENT_NAMES, { description: 'a memory element of the topology document' });

export const GpuSummarySchema = Type.Object({
  uuid: Type.String({ description: 'GPU UUID (GPU-…)' }),
  index: Type.Integer({ minimum: 0 }),
  name: Type.String(),
  vendor: StringEnum(['nvidia', 'amd'] as const),
  pciBusId: NullableString(),
  driverVersion: Type.String(),
  simulated: Type.Boolean({ description: 'true when the simulated backend produced this GPU' }),
  present: Type.Boolean({ description: 'still visible to NVML / the backend right now' }),
  probe: Type.Object({
    status: StringEnum(GPU_PROBE_STATUSES),
    stale: Type.Boolean({ description: 'the served result is for another driver or probe version; a re-probe is queued' }),
    staleReason: NullableString(),
    lastResultAt: NullableTimestamp('when the served result was measured'),
    activeJobId: NullableString(),
  }),
  migDeviceUuids: Type.Array(Type.String()),
}, { $id: 'GpuSummary' });

export const GpuListSchema = Type.Object({ gpus: Type.Array(sharedRef(GpuSummarySchema)) });

export const GpuParamsSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: MAX_PARAM_LENGTH, description: 'GPU index, GPU UUID or MIG device UUID' }),
});

/** Optional: an absent body is read as `{}` (all elements, no force). */
export const ProbeRequestBodySchema = Type.Object(
  {
    only: Type.Optional(Type.Array(ElementNameSchema, { minItems: 1, uniqueItems: true, description: 'probe only these elements' })),
    force: Type.Optional(Type.Boolean({ description: 're-probe even when a current result exists (default false)' })),
  },
  { additionalProperties: false, description: 'optional; an absent body probes every element' },
);

export type ProbeRequestBody = Static<typeof ProbeRequestBodySchema>;

const gpuSummaryMatches: Equivalent<Static<typeof GpuSummarySchema>, GpuSummary> = true;
void gpuSummaryMatches;
