/**
 * Schemas of the GPU resource: a GPU as the API lists it, a MIG device, and
 * the probe request. GpuSummary and MigDeviceSummary are their Static<> types.
 */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_PARAM_LENGTH, NullableString, NullableTimestamp, sharedRef } from './api-schema.js';
import { ELEMENT_NAMES, GPU_PROBE_STATUSES, PROBE_TARGETS, type ProbeTarget } from './document-schema.js';
import { MigL2ShareSchema, MigPlacementSchema } from './mig-schema.js';
import { StringEnum } from './schema-helpers.js';

/** Where the driver version of the cache key came from (server/topology/driver-identity.ts). */
export const DRIVER_SOURCES = ['nvml', 'kernel-module', 'last-known', 'runtime'] as const;
export type DriverSource = (typeof DRIVER_SOURCES)[number];

export type GpuProbeStatus = (typeof GPU_PROBE_STATUSES)[number];

export const ElementNameSchema = StringEnum(ELEMENT_NAMES, { description: 'a memory element of the topology document' });

/** What a job's `only` may hold: any element or opt-in family name. */
export const ProbeTargetSchema = StringEnum(PROBE_TARGETS, {
  description: 'a memory element of the topology document, or an opt-in family (traffic)',
});

export const GpuSummarySchema = Type.Object(
  {
    uuid: Type.String({ description: 'GPU UUID (GPU-…)' }),
    index: Type.Integer({ minimum: 0 }),
    name: Type.String(),
    vendor: StringEnum(['nvidia', 'amd'] as const),
    pciBusId: NullableString(),
    driverVersion: Type.String({
      description: 'the driver release of the cache key (NVML: "580.95.05"), the same whichever source answered',
    }),
    driverSource: Type.Optional(
      StringEnum(DRIVER_SOURCES, {
        description:
          'where driverVersion came from: nvml, kernel-module (/proc/driver/nvidia/version), last-known (remembered while NVML is down) or runtime (the probe runtime: "cuda-13000")',
      }),
    ),
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
  },
  { $id: 'GpuSummary' },
);

/** A model part inlined (its properties, closed, without its $id): the document's parts are not shared API schemas. */
const inlined = <T extends typeof MigL2ShareSchema | typeof MigPlacementSchema>(part: T) =>
  Type.Object(part.properties as T['properties'], {
    additionalProperties: false,
    ...(part.description === undefined ? {} : { description: part.description }),
  });

export const MigDeviceSummarySchema = Type.Object(
  {
    kind: Type.Literal('mig-device', { description: 'a MIG device, not a GPU (a GPU summary has no kind)' }),
    uuid: Type.String({ description: 'the MIG device UUID (MIG-…) as NVML spells it' }),
    parent: Type.Object(
      { uuid: Type.String({ description: 'GPU UUID (GPU-…)' }), index: Type.Integer({ minimum: 0 }), name: Type.String() },
      { additionalProperties: false, description: 'the GPU this MIG device is part of: GET /v1/gpus/{parent.uuid}' },
    ),
    gpuInstanceId: Type.Integer({ minimum: 0 }),
    computeInstanceId: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'the compute instance this MIG device is; null when NVML listed none with this UUID',
    }),
    profileId: Type.Integer({ minimum: 0, description: 'NVML GPU-instance profile id' }),
    profileName: NullableString({ description: 'as NVML names the profile, e.g. "MIG 3g.40gb"' }),
    placement: Type.Union([inlined(MigPlacementSchema), Type.Null()], {
      description: 'the memory slices it sits on; null when not readable',
    }),
    multiprocessorCount: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: "SMs: the compute instance's, else the GPU instance's",
    }),
    memorySizeBytes: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    l2: inlined(MigL2ShareSchema),
    simulated: Type.Boolean({ description: 'true when the simulated backend measured the parent' }),
  },
  {
    $id: 'MigDeviceSummary',
    additionalProperties: false,
    description:
      'a MIG device: its GPU and compute instance, profile, SMs, memory and L2 share (its topology: GET /v1/gpus/{uuid}/topology)',
  },
);

/** GET /v1/gpus/{id}: a GPU by index or GPU UUID, the MIG device by MIG device UUID. */
export const GpuOrMigDeviceSchema = Type.Union([sharedRef(GpuSummarySchema), sharedRef(MigDeviceSummarySchema)], {
  description: 'a GPU index or GPU UUID answers the GPU; a MIG device UUID answers the MIG device (kind: "mig-device")',
});

export const GpuListSchema = Type.Object({ gpus: Type.Array(sharedRef(GpuSummarySchema)) });

export const GpuParamsSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: MAX_PARAM_LENGTH, description: 'GPU index, GPU UUID or MIG device UUID' }),
});

/**
 * The probe request body. `measurable` are the elements some discovery
 * strategy measures and the opt-in families (server/discovery/registry.ts:
 * PROBE_TARGETS), passed in because the model imports nothing outside itself;
 * server/api/probe-request.ts builds the one the route uses. Optional: an
 * absent body is read as `{}` (all elements, no force).
 */
export function probeRequestBodySchema(measurable: readonly ProbeTarget[]) {
  const MeasurableElementSchema = StringEnum(measurable, {
    description: 'an element some discovery strategy measures, or an opt-in family (traffic)',
  });
  return Type.Object(
    {
      only: Type.Optional(
        Type.Array(MeasurableElementSchema, {
          minItems: 1,
          uniqueItems: true,
          description: `probe only these elements (and keep the others from the previous result); measurable: ${measurable.join(', ')}`,
        }),
      ),
      force: Type.Optional(
        Type.Boolean({ description: "cancel the GPU's queued, waiting or running probe and start this one (default false)" }),
      ),
      evenIfBusy: Type.Optional(
        Type.Boolean({
          description:
            'measure even while other processes use the GPU (default false: the job waits for the GPU to be idle under TOPOD_PROBE_WHEN=idle); the result then says it was measured on a busy GPU',
        }),
      ),
    },
    { additionalProperties: false, description: 'optional; an absent body probes every element' },
  );
}

export type ProbeRequestBody = Static<ReturnType<typeof probeRequestBodySchema>>;
export type GpuSummary = Static<typeof GpuSummarySchema>;
export type MigDeviceSummary = Static<typeof MigDeviceSummarySchema>;
