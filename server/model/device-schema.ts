/**
 * What the document says about the device besides its measurements: the
 * runtime's properties from the probe's hello (static, stored with the
 * result) and the stable part of the live NVML state (merged in when served).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Count, Nullable, partRef } from './schema-helpers.js';

const NullableCount = (description?: string) => Nullable(Count(), description === undefined ? {} : { description });

/** One device as the probe's hello reports it (the runtime's device properties; source "api"). */
export const DevicePropertiesSchema = Type.Object(
  {
    index: Count('runtime device ordinal'),
    uuid: Type.String({ description: 'GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx' }),
    name: Type.String(),
    pciBusId: Nullable(Type.String(), { description: 'NVML-style bus id, 00000000:07:00.0' }),
    architecture: Type.String({ description: '"sm_90" on NVIDIA, "gfx90a" on AMD' }),
    computeCapabilityMajor: Count(),
    computeCapabilityMinor: Count(),
    multiprocessorCount: Count(),
    clockRateKHz: NullableCount('null when the runtime does not answer'),
    memoryClockRateKHz: NullableCount('null when the runtime does not answer'),
    memoryBusWidthBits: NullableCount(),
    totalMemoryBytes: Count(),
    l2CacheSizeBytes: Count(),
    persistingL2CacheMaxBytes: NullableCount('null on AMD and where the runtime reports none'),
    sharedMemPerMultiprocessorBytes: Count(),
    sharedMemPerBlockBytes: Count(),
    sharedMemPerBlockOptinBytes: NullableCount(),
    totalConstMemBytes: NullableCount(),
    regsPerMultiprocessor: NullableCount(),
    regsPerBlock: NullableCount(),
    warpSize: Count(),
    maxThreadsPerBlock: Count(),
    maxThreadsPerMultiprocessor: NullableCount(),
    maxBlocksPerMultiprocessor: NullableCount(),
    // Added with issue 8; hellos recorded before it lack them.
    reservedSharedMemPerBlockBytes: Type.Optional(
      NullableCount('shared memory the driver reserves per block (1 KiB on sm_80/sm_90): part of what a block takes from the L1'),
    ),
    maxL2FetchGranularityBytes: Type.Optional(
      NullableCount(
        'cudaLimitMaxL2FetchGranularity in force when the probe ran: how many bytes device memory moves into the L2 per miss (null on AMD)',
      ),
    ),
    // Added with issue 21 (MT4G's compute and l1 keys); hellos recorded before it lack them.
    concurrentKernels: Type.Optional(
      Type.Boolean({ description: 'the runtime says kernels of one context can run at once (concurrentKernels)' }),
    ),
    cooperativeLaunch: Type.Optional(Type.Boolean({ description: 'the runtime supports cooperative launches (cooperativeLaunch)' })),
    globalL1CacheSupported: Type.Optional(
      Type.Boolean({ description: 'the runtime says global loads can be cached in the L1 (globalL1CacheSupported)' }),
    ),
    localL1CacheSupported: Type.Optional(
      Type.Boolean({ description: 'the runtime says local memory can be cached in the L1 (localL1CacheSupported)' }),
    ),
    asicRevision: Type.Optional(NullableCount('the ASIC revision (AMD; null on NVIDIA, whose runtime has none)')),
  },
  { additionalProperties: false, description: 'one device as the runtime reported it in the probe hello' },
);
export type DeviceProperties = Static<typeof DevicePropertiesSchema>;

/**
 * The document's `device`: every property the hello reported, or none (`{}`)
 * when the result was rebuilt from raw series that hold no hello. Typed as
 * the properties made optional, so a client checks for the field it reads.
 */
export const DocumentDeviceSchema = Type.Partial(DevicePropertiesSchema, {
  $id: 'DeviceProperties',
  additionalProperties: false,
  description:
    'device properties as the runtime reported them in the probe hello (source "api"): all of them, or none ({}) when no hello was recorded',
});
export type DocumentDeviceProperties = Static<typeof DocumentDeviceSchema>;

export const ClockSchema = Type.Object(
  {
    smClockHz: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'SM clock measured against the global nanosecond timer' })),
    clockReadOverheadCycles: Type.Optional(
      Type.Number({ minimum: 0, description: 'cycles between two back-to-back clock reads, subtracted from latencies' }),
    ),
  },
  { $id: 'ClockCalibration', additionalProperties: false, description: 'SM clock and clock-read overhead used to convert cycles' },
);
export type ClockCalibration = Static<typeof ClockSchema>;

export const DynamicDeviceSchema = Type.Object(
  {
    serial: Nullable(Type.String()),
    pciBusId: Nullable(Type.String()),
    architecture: Nullable(Type.String({ description: 'NVML architecture name: ampere, hopper, blackwell, …' })),
    memoryTotalBytes: NullableCount(),
    bar1TotalBytes: NullableCount(),
    maxClocks: Type.Object({ smMHz: NullableCount(), memoryMHz: NullableCount() }, { additionalProperties: false }),
    memoryBusWidthBits: NullableCount(),
    pcie: Type.Object({ maxGen: NullableCount(), maxWidth: NullableCount() }, { additionalProperties: false }),
    numaNode: Nullable(Type.Integer()),
    cpuAffinity: Nullable(Type.String({ description: 'CPU list close to the GPU, as NVML gives it' })),
    nvlinks: Type.Array(Type.Object({ link: Count(), remotePciBusId: Nullable(Type.String()) }, { additionalProperties: false }), {
      description: 'active NVLinks and the PCI bus id at their far end',
    }),
    degraded: Type.Array(Type.String(), { description: 'fields NVML refused, with the reason ("placements: NO_PERMISSION")' }),
  },
  {
    $id: 'DynamicDevice',
    additionalProperties: false,
    description:
      'the stable part of the GPU as NVML sees it now; volatile readings (memory used, clocks now) are left out so the ETag changes only when this does',
  },
);

export const DynamicStateSchema = Type.Object(
  {
    available: Type.Boolean({ description: 'NVML could be read' }),
    reason: Nullable(Type.String(), { description: 'why NVML state is unavailable (no libnvidia-ml, init failure, …)' }),
    driverVersion: Nullable(Type.String({ description: 'driver release as NVML reports it, e.g. 580.95.05' })),
    device: Nullable(partRef(DynamicDeviceSchema), { description: 'null when NVML does not list this GPU' }),
  },
  { $id: 'DynamicState', additionalProperties: false, description: 'the stable part of the live NVML state' },
);
export type DynamicState = Static<typeof DynamicStateSchema>;
