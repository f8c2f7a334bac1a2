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
  /** remoteDeviceType: nvmlIntNvLinkDeviceType_t (0 GPU, 1 IBM NPU, 2 NVSwitch, 255 unknown); absent from older addon builds. */
  nvlinks: Array<{ link: number; remotePciBusId: string | null; remoteDeviceType?: number | null }>;
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

/** Two devices of the snapshot (by index, a < b): NVML's own codes, each null when refused (see degraded). */
export interface RawDevicePair {
  a: number;
  b: number;
  /** nvmlGpuTopologyLevel_t: 0 internal, 10 single switch, 20 multiple, 30 host bridge, 40 NUMA node, 50 system. */
  commonAncestor: number | null;
  /** nvmlGpuP2PStatus_t per capability: 0 OK, 1 chipset, 2 GPU, 3 IOH topology not supported, 4 disabled by regkey, 5 not supported, 6 unknown. */
  p2pRead: number | null;
  p2pWrite: number | null;
  p2pNvlink: number | null;
  p2pAtomics: number | null;
  degraded: string[];
  /** false when the pair came from the addon's cache (read once per session and driver, like the static fields). */
  read: boolean;
}

export interface RawNvmlSnapshot {
  libraryPath: string;
  driverVersion: string | null;
  cudaDriverVersion: number | null;
  deviceCount: number;
  devices: RawDevice[];
  /** Every pair of devices; absent from older addon builds. */
  pairs?: RawDevicePair[];
  degraded: string[];
  /** How many times this process has torn NVML down and initialised it again. */
  reinitCount: number;
  readMicros: number;
}

/** One entry of a running-process list; NVML's own fields. */
export interface RawProcess {
  /** As NVML sees it: the host's PID namespace, also when topod runs in a container. */
  pid: number;
  /** null when NVML cannot attribute memory to the process (NVML_VALUE_NOT_AVAILABLE). */
  usedMemoryBytes: number | null;
  /** Set when MIG is on and the list came from the physical GPU's handle. */
  gpuInstanceId: number | null;
  computeInstanceId: number | null;
}

/** Each list null when NVML refused it (named in degraded). */
export interface RawProcessLists {
  compute: RawProcess[] | null;
  graphics: RawProcess[] | null;
}

export interface RawMigActivity {
  index: number;
  uuid: string | null;
  processes: RawProcessLists;
  degraded: string[];
}

/** What addon.readActivity() resolves to: one GPU, now. */
export interface RawActivity {
  index: number;
  uuid: string | null;
  processes: RawProcessLists;
  /** nvmlDeviceGetUtilizationRates: percent of the driver's last sample period. */
  utilizationGpuPercent: number | null;
  utilizationMemoryPercent: number | null;
  /** Every GPU-utilization sample the driver buffers (nvmlDeviceGetSamples), oldest first; [] when it holds none. */
  utilizationSamples: Array<{ timestampMicros: number; percent: number }> | null;
  memory: RawMemory | null;
  temperatureC: number | null;
  powerMilliwatts: number | null;
  smClockMHz: number | null;
  maxSmClockMHz: number | null;
  /** nvmlClocksEventReason* bits. */
  clocksEventReasons: number | null;
  persistenceMode: boolean | null;
  eccModeCurrent: boolean | null;
  eccModePending: boolean | null;
  /** null when the GPU cannot do MIG (or NVML refused to say). */
  migModeCurrent: number | null;
  /** With MIG on: each MIG device's own process lists. */
  migDevices: RawMigActivity[];
  degraded: string[];
  libraryPath: string;
  reinitCount: number;
  readMicros: number;
}

/** Exactly one of uuid (a physical GPU's) and index. */
export type NvmlActivityTarget = { uuid: string; index?: undefined } | { index: number; uuid?: undefined };

export type NvmlActivityOptions = NvmlActivityTarget & { libraryPath?: string };

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
  /** One GPU's activity; rejects like read(), or with code TOPOD_NVML_GPU_NOT_FOUND. Absent from addon builds before it. */
  readActivity?(options: NvmlActivityOptions): Promise<RawActivity>;
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
