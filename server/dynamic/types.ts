/**
 * Live state read from NVML (or its absence). Produced by server/dynamic,
 * merged into the topology by server/topology. Every field NVML may refuse is
 * nullable: NOT_SUPPORTED / NO_PERMISSION degrade one field, never the answer.
 */
import type { P2pStatus, PcieAncestor } from '../model/node-schema.js';
import type { ActivityReadOptions, GpuActivityReading } from './activity-types.js';

export interface MigProfileInfo {
  /** NVML GPU-instance profile id (e.g. 19 = 1g.10gb on H100). */
  id: number;
  /** NVML profile index (NVML_GPU_INSTANCE_PROFILE_*), used to query it. */
  profileIndex: number;
  name: string;
  sliceCount: number;
  instanceCount: number;
  multiprocessorCount: number;
  memorySizeBytes: number;
  copyEngineCount: number | null;
  /** null when NVML refused (NO_PERMISSION / NOT_SUPPORTED). */
  placements: Array<{ start: number; size: number }> | null;
}

export interface MigComputeInstanceInfo {
  id: number;
  profileId: number | null;
  multiprocessorCount: number;
  /** The MIG device (CUDA-visible handle) of this compute instance, when NVML gave it. */
  migDeviceUuid?: string | null;
}

export interface MigInstanceInfo {
  gpuInstanceId: number;
  profileId: number;
  /** null when not readable. */
  placement: { start: number; size: number } | null;
  migDeviceUuid: string | null;
  memorySizeBytes: number | null;
  multiprocessorCount: number | null;
  computeInstances: MigComputeInstanceInfo[];
}

export interface NvmlDeviceState {
  index: number;
  uuid: string;
  name: string;
  serial: string | null;
  pciBusId: string | null;
  architecture: string | null;
  memory: { totalBytes: number; usedBytes: number; freeBytes: number } | null;
  bar1: { totalBytes: number; usedBytes: number } | null;
  maxClocks: { smMHz: number | null; memoryMHz: number | null };
  memoryBusWidthBits: number | null;
  pcie: { currentGen: number | null; maxGen: number | null; currentWidth: number | null; maxWidth: number | null };
  numaNode: number | null;
  cpuAffinity: string | null;
  nvlinks: Array<{ link: number; remotePciBusId: string | null }>;
  /** What each NVLink above ends at (a peer GPU, or an NVSwitch on HGX boards); absent when not read. */
  nvlinkRemoteTypes?: Array<{ link: number; type: NvlinkRemoteType | null }>;
  mig: {
    mode: { current: number; pending: number } | null;
    profiles: MigProfileInfo[];
    instances: MigInstanceInfo[];
  };
  /** Fields NVML refused, with the reason ("placements: NO_PERMISSION"). */
  degraded: string[];
}

export const NVLINK_REMOTE_TYPES = ['gpu', 'ibmnpu', 'switch', 'unknown'] as const;
export type NvlinkRemoteType = (typeof NVLINK_REMOTE_TYPES)[number];

/** How two GPUs connect, as NVML answers it; every field null when refused (listed in degraded). */
export interface NvmlDevicePair {
  /** The GPUs' UUIDs, the lower index first. */
  gpus: [string, string];
  commonAncestor: PcieAncestor | null;
  p2p: { read: P2pStatus | null; write: P2pStatus | null; nvlink: P2pStatus | null; atomics: P2pStatus | null };
  degraded: string[];
}

export interface DynamicSnapshot {
  available: boolean;
  /** Why dynamic state is unavailable (no libnvidia-ml, init failure, ...). */
  reason: string | null;
  driverVersion: string | null;
  cudaDriverVersion: number | null;
  devices: NvmlDeviceState[];
  /** Every pair of devices (absent when not read: no NVML, an older addon). */
  links?: NvmlDevicePair[];
  readAt: string;
}

export const UNAVAILABLE_SNAPSHOT = (reason: string): DynamicSnapshot => ({
  available: false,
  reason,
  driverVersion: null,
  cudaDriverVersion: null,
  devices: [],
  readAt: new Date().toISOString(),
});

/** Source of dynamic state: the NVML addon, or nothing. */
export interface DynamicSource {
  read(): Promise<DynamicSnapshot>;
  /**
   * What runs on one GPU (by its UUID) and how it runs, with utilization
   * judged over `windowMs`. Never throws for NVML's sake: no NVML, or no such
   * GPU, reads as `{ activity: null, reason }`.
   */
  readActivity(gpuUuid: string, options?: ActivityReadOptions): Promise<GpuActivityReading>;
  close(): Promise<void>;
}
