/**
 * What the native addon (native/nvml) hands back: NVML's own units and codes,
 * every refused field null and listed in `degraded`. nvml-map.ts turns it into
 * the DynamicSnapshot the rest of topod uses.
 */

export interface RawPlacement {
  start: number;
  size: number;
}

export interface RawGpuInstanceProfile {
  profileIndex: number;
  id: number;
  /** "MIG 1g.5gb"; empty from drivers that only have the v1 profile call. */
  name: string;
  sliceCount: number;
  instanceCount: number;
  multiprocessorCount: number;
  copyEngineCount: number;
  memorySizeMB: number;
  placements: RawPlacement[] | null;
}

export interface RawComputeInstance {
  id: number;
  profileId: number | null;
  multiprocessorCount: number | null;
  sliceCount: number | null;
}

export interface RawGpuInstance {
  id: number;
  profileId: number;
  placement: RawPlacement | null;
  computeInstances: RawComputeInstance[];
}

export interface RawMigDevice {
  index: number;
  uuid: string | null;
  gpuInstanceId: number | null;
  computeInstanceId: number | null;
  multiprocessorCount: number | null;
  memorySizeMB: number | null;
  gpuInstanceSliceCount: number | null;
  computeInstanceSliceCount: number | null;
  sharedCopyEngineCount: number | null;
  degraded: string[];
}

export interface RawMemory {
  totalBytes: number;
  usedBytes: number;
  freeBytes: number;
}

export interface RawDevice {
  index: number;
  uuid: string | null;
  name: string | null;
  serial: string | null;
  pciBusId: string | null;
  /** nvmlDeviceArchitecture_t (7 = Ampere, 9 = Hopper, ...). */
  architecture: number | null;
  memory: RawMemory | null;
  bar1: RawMemory | null;
  maxSmClockMHz: number | null;
  maxMemoryClockMHz: number | null;
  memoryBusWidthBits: number | null;
  pcieCurrentGen: number | null;
  pcieMaxGen: number | null;
  pcieCurrentWidth: number | null;
  pcieMaxWidth: number | null;
  numaNode: number | null;
  cpuAffinity: string | null;
  nvlinks: Array<{ link: number; remotePciBusId: string | null }>;
  migModeCurrent: number | null;
  migModePending: number | null;
  profiles: RawGpuInstanceProfile[];
  /** null when NVML refused to list them (see degraded); [] when there are none. */
  gpuInstances: RawGpuInstance[] | null;
  migDevices: RawMigDevice[];
  degraded: string[];
  /** false when the static fields (identity, limits, MIG profile table) came from the addon's per-UUID cache. */
  staticRead: boolean;
  readMicros: number;
}

export interface RawNvmlSnapshot {
  libraryPath: string;
  driverVersion: string | null;
  cudaDriverVersion: number | null;
  deviceCount: number;
  devices: RawDevice[];
  degraded: string[];
  /** How many times this process has torn NVML down and initialised it again. */
  reinitCount: number;
  readMicros: number;
}

export interface NvmlAddonStatus {
  loaded: boolean;
  references: number;
  reinitCount: number;
}

export interface NvmlReadOptions {
  libraryPath?: string;
  /**
   * How old the cached static fields of a device may be before they are read
   * again (default 5 minutes; 0 = read everything). They are re-read anyway
   * when the device is new, its MIG mode changed, NVML re-initialised or the
   * driver version changed.
   */
  staticMaxAgeMs?: number;
}

/** The addon's exports (native/nvml/src/workers.h). */
export interface NvmlAddon {
  read(options?: NvmlReadOptions): Promise<RawNvmlSnapshot>;
  open(options?: { libraryPath?: string }): Promise<void>;
  close(): Promise<void>;
  status(): NvmlAddonStatus;
}

/** The Error the addon rejects with when NVML cannot be loaded, initialised or read. */
export interface NvmlNativeError extends Error {
  /** "TOPOD_NVML_LIBRARY_NOT_FOUND", "NVML_ERROR_DRIVER_NOT_LOADED", ... */
  code: string;
  stage: 'dlopen' | 'symbols' | 'init' | 'read';
  nvmlLibrary: string;
}
