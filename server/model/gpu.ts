import type { MigL2Share } from './mig-schema.js';

/** Where the driver version of the cache key came from (server/topology/driver-identity.ts). */
export const DRIVER_SOURCES = ['nvml', 'kernel-module', 'last-known', 'runtime'] as const;
export type DriverSource = (typeof DRIVER_SOURCES)[number];

/** A driver version and where it was learnt. */
export interface DriverIdentity {
  version: string;
  source: DriverSource;
}

/** Who a GPU is, as far as caching and the API are concerned. */
export interface GpuIdentity {
  uuid: string;
  index: number;
  name: string;
  vendor: 'nvidia' | 'amd';
  pciBusId: string | null;
  /** Driver release (NVML: "580.95.05"); cache key together with uuid and probe version. */
  driverVersion: string;
  /** Set by the GPU registry once the version is made canonical; backends leave it out. */
  driverSource?: DriverSource;
}

export type GpuProbeStatus = 'unprobed' | 'queued' | 'waiting' | 'running' | 'probed' | 'failed';

/** A GPU as the API lists it: its identity (driver version included) plus what topod knows of it. */
export interface GpuSummary extends GpuIdentity {
  simulated: boolean;
  /** Still visible to NVML / the backend right now. */
  present: boolean;
  probe: {
    status: GpuProbeStatus;
    /** The result served is for another driver or probe version: re-probe queued. */
    stale: boolean;
    staleReason: string | null;
    lastResultAt: string | null;
    activeJobId: string | null;
  };
  migDeviceUuids: string[];
}

/**
 * A MIG device as `GET /v1/gpus/{MIG-uuid}` shows it: which GPU instance (and
 * compute instance) it is, its profile, SMs, memory and L2 share — the MIG
 * view's numbers (server/topology/mig.ts), not the parent's summary.
 */
export interface MigDeviceSummary {
  kind: 'mig-device';
  /** The MIG device UUID as NVML spells it. */
  uuid: string;
  parent: { uuid: string; index: number; name: string };
  gpuInstanceId: number;
  /** The compute instance this MIG device is; null when NVML listed none with this UUID (the GPU instance's own). */
  computeInstanceId: number | null;
  profileId: number;
  profileName: string | null;
  placement: { start: number; size: number } | null;
  /** The compute instance's SMs when it is one, else the GPU instance's. */
  multiprocessorCount: number | null;
  memorySizeBytes: number | null;
  l2: MigL2Share;
  simulated: boolean;
}
