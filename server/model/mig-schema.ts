/**
 * The MIG view of one GPU (built by server/topology/mig.ts): what each
 * GPU-instance profile would give and what each existing instance has —
 * SMs, memory, and its share of L2.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Count, Nullable, StringEnum, partRef } from './schema-helpers.js';

export const MIG_L2_SOURCES = ['nvml', 'derived'] as const;
export type MigL2Source = (typeof MIG_L2_SOURCES)[number];
export const MIG_MODE_NAMES = ['enabled', 'disabled'] as const;
export type MigModeName = (typeof MIG_MODE_NAMES)[number];

export const MigPlacementSchema = Type.Object(
  { start: Count('first memory slice'), size: Count('memory slices') },
  { $id: 'MigPlacement', additionalProperties: false, description: 'where a GPU instance sits, in memory slices' },
);

export const MigL2ShareSchema = Type.Object(
  {
    bytes: Nullable(Count(), { description: 'L2 × (memory slices ÷ the GPU’s memory slices); null when the GPU’s L2 size is not known' }),
    memorySlices: Count('memory slices this share covers'),
    source: StringEnum(MIG_L2_SOURCES, { description: 'nvml: from NVML placements; derived: from memory ratios' }),
    reachablePerSmBytes: Nullable(Type.Number({ minimum: 0 }), {
      description: 'min(share, measured L2 segment): the L2 one SM can reach; null without a measured segment size',
    }),
    partitions: Nullable(Count(), {
      description:
        'L2 partitions these memory slices lie in, with the measured partition count and the GPU’s slices split evenly across partitions in slice order (a model: NVML does not say). 1: the whole share is near for SMs of one partition group and far for the other; 2 or more: every SM has part of the share near, part far. null without measured partitions',
    }),
  },
  {
    $id: 'MigL2Share',
    additionalProperties: false,
    description: 'the share of L2 a MIG instance owns: the slices in front of its memory slices',
  },
);
export type MigL2Share = Static<typeof MigL2ShareSchema>;

export const MigClusterShareSchema = Type.Object(
  {
    gpcCount: Count('GPCs the instance holds: one per compute slice'),
    smsPerGpc: Count('SMs of each, about SMs ÷ compute slices, never more than the parent’s largest measured GPC'),
    largestCluster: Count(
      'the largest thread block cluster the instance can launch: smsPerGpc capped by the parent’s measured maximum cluster size',
    ),
    source: Type.Literal('derived'),
  },
  {
    $id: 'MigClusterShare',
    additionalProperties: false,
    description:
      'what a GPU instance of this profile can launch in thread block clusters, derived from its compute slices and the parent GPU’s measured GPC map and cluster limits (NVML does not say which SMs an instance holds)',
  },
);
export type MigClusterShareView = Static<typeof MigClusterShareSchema>;

export const MigProfileSchema = Type.Object(
  {
    id: Count('NVML GPU-instance profile id (e.g. 19 = 1g.10gb on H100)'),
    profileIndex: Count('NVML profile index (NVML_GPU_INSTANCE_PROFILE_*)'),
    name: Type.String({ description: 'as NVML names it, e.g. "MIG 3g.20gb"' }),
    sliceCount: Count('compute slices'),
    instanceCount: Count('instances of this profile the GPU can hold'),
    multiprocessorCount: Count(),
    memorySizeBytes: Count(),
    copyEngineCount: Nullable(Count()),
    placements: Nullable(Type.Array(partRef(MigPlacementSchema)), {
      description: 'null when NVML refused (NO_PERMISSION / NOT_SUPPORTED)',
    }),
    l2: partRef(MigL2ShareSchema),
    clusters: Nullable(partRef(MigClusterShareSchema), {
      description: 'null when the parent GPU has no measured GPC map or no thread block clusters',
    }),
  },
  {
    $id: 'MigProfile',
    additionalProperties: false,
    description: 'a GPU-instance profile as NVML reports it, plus the L2 share an instance of it would get',
  },
);
export type MigProfileView = Static<typeof MigProfileSchema>;

export const MigComputeInstanceSchema = Type.Object(
  {
    id: Count(),
    profileId: Nullable(Count()),
    multiprocessorCount: Count(),
    migDeviceUuid: Nullable(Type.String({ description: 'the MIG device (CUDA-visible handle) of this compute instance' })),
  },
  { $id: 'MigComputeInstance', additionalProperties: false, description: 'a compute instance inside a GPU instance' },
);
export type MigComputeInstanceView = Static<typeof MigComputeInstanceSchema>;

export const MigInstanceSchema = Type.Object(
  {
    migDeviceUuid: Nullable(Type.String({ description: 'MIG-…; ask GET /v1/gpus/{it}/topology for the instance view' })),
    gpuInstanceId: Count(),
    profileId: Count(),
    profileName: Nullable(Type.String()),
    placement: Nullable(partRef(MigPlacementSchema), { description: 'null when not readable' }),
    multiprocessorCount: Nullable(Count()),
    memorySizeBytes: Nullable(Count()),
    computeInstances: Type.Array(partRef(MigComputeInstanceSchema)),
    l2: partRef(MigL2ShareSchema),
    clusters: Nullable(partRef(MigClusterShareSchema), {
      description: 'null when the parent GPU has no measured GPC map or no thread block clusters',
    }),
  },
  {
    $id: 'MigInstance',
    additionalProperties: false,
    description: 'an existing GPU instance: its SMs, memory, placement, compute instances and L2 share',
  },
);
export type MigInstanceView = Static<typeof MigInstanceSchema>;

export const MigViewSchema = Type.Object(
  {
    mode: Nullable(
      Type.Object({ current: StringEnum(MIG_MODE_NAMES), pending: StringEnum(MIG_MODE_NAMES) }, { additionalProperties: false }),
      {
        description: 'null when the GPU has no MIG mode',
      },
    ),
    memorySliceCount: Nullable(Count(), { description: 'memory slices of the whole GPU; null when the GPU reports no MIG profiles' }),
    memorySliceSource: Nullable(StringEnum(MIG_L2_SOURCES)),
    l2SizeBytes: Nullable(Type.Number({ minimum: 0 }), { description: 'the L2 size the shares divide: measured, else the runtime’s' }),
    l2SegmentBytes: Nullable(Type.Number({ minimum: 0 }), { description: 'the measured L2 segment (partition) size' }),
    profiles: Type.Array(partRef(MigProfileSchema), { description: 'every GPU-instance profile, also with MIG off' }),
    instances: Type.Array(partRef(MigInstanceSchema)),
  },
  {
    $id: 'MigView',
    additionalProperties: false,
    description: 'the MIG view: mode, memory slices, L2 size and segment, profiles and instances with their L2 share',
  },
);
export type MigView = Static<typeof MigViewSchema>;

/** Every named part above, for the `$defs` of the documents that use them. */
export const MIG_PARTS = [
  MigPlacementSchema,
  MigL2ShareSchema,
  MigClusterShareSchema,
  MigProfileSchema,
  MigComputeInstanceSchema,
  MigInstanceSchema,
  MigViewSchema,
];
