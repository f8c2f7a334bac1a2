/**
 * Who a GPU is. A GPU and a MIG device as the API lists them (GpuSummary,
 * MigDeviceSummary) are the Static<> types of their schemas (./gpu-schema.ts).
 */
import type { DriverSource } from './gpu-schema.js';

export { DRIVER_SOURCES } from './gpu-schema.js';
export type { DriverSource, GpuProbeStatus, GpuSummary, MigDeviceSummary } from './gpu-schema.js';

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
