/**
 * What runs on one GPU and how it runs, read from NVML: the facts a probe
 * policy needs before and while it measures, and the conditions a result
 * records. Every field NVML may refuse is nullable and named in `degraded`.
 */

/** nvmlClocksEventReason* bits by name, in bit order (nvml.h). */
export const CLOCKS_EVENT_REASON_BITS = {
  'gpu-idle': 0x1,
  'applications-clocks-setting': 0x2,
  'sw-power-cap': 0x4,
  'hw-slowdown': 0x8,
  'sync-boost': 0x10,
  'sw-thermal-slowdown': 0x20,
  'hw-thermal-slowdown': 0x40,
  'hw-power-brake-slowdown': 0x80,
  'display-clock-setting': 0x100,
} as const;

export type KnownClocksEventReason = keyof typeof CLOCKS_EVENT_REASON_BITS;
/** A known reason, or `bit-<n>` for a bit newer than this table. */
export type ClocksEventReason = KnownClocksEventReason | `bit-${number}`;

export type GpuProcessKind = 'compute' | 'graphics';

export interface GpuProcess {
  /** As NVML reports it: the host's PID namespace, even when topod runs in a container. */
  pid: number;
  kind: GpuProcessKind;
  /** null when NVML cannot attribute memory to the process. */
  usedMemoryBytes: number | null;
  /** The MIG device it runs on; null on a GPU without MIG (or when only the GPU's list named it). */
  migDeviceUuid: string | null;
}

export interface GpuUtilization {
  /**
   * 'nvml-samples': the driver's own sample buffer over the window (one read);
   * 'polled': several instantaneous reads spread over the window (the driver keeps no samples).
   */
  source: 'nvml-samples' | 'polled';
  /** Percent of time a kernel ran: the highest and the mean sample of the window. */
  maxPercent: number;
  meanPercent: number;
  sampleCount: number;
  /** Time between the window's first and last sample. */
  spanMs: number;
  /** The last instantaneous memory-controller utilization, percent. */
  memoryPercent: number | null;
}

export interface GpuActivity {
  gpuUuid: string;
  index: number;
  readAt: string;
  /** Unique per (pid, kind); a process seen on a MIG device carries its UUID. */
  processes: GpuProcess[];
  /** Whether each list could be read on the GPU or on at least one of its MIG devices. */
  processListsRead: { compute: boolean; graphics: boolean };
  /** null: NVML gives none (on a MIG-enabled GPU, utilization is NOT_SUPPORTED). */
  utilization: GpuUtilization | null;
  memory: { totalBytes: number; usedBytes: number; freeBytes: number } | null;
  temperatureC: number | null;
  powerWatts: number | null;
  smClockMHz: number | null;
  maxSmClockMHz: number | null;
  /** Why the clocks are below their maximum right now ([] = nothing holds them back). */
  clocksEventReasons: ClocksEventReason[] | null;
  persistenceMode: boolean | null;
  eccModeCurrent: boolean | null;
  /** null when the GPU cannot do MIG. */
  migEnabled: boolean | null;
  /** Fields NVML refused, with the reason ("utilization: NOT_SUPPORTED"); MIG devices' prefixed "mig[2] ". */
  degraded: string[];
}

/** One activity read: the activity, or why there is none (no NVML, no such GPU). */
export type GpuActivityReading = { activity: GpuActivity; reason: null } | { activity: null; reason: string };

export interface ActivityReadOptions {
  /** How far back utilization is judged (default DEFAULT_ACTIVITY_WINDOW_MS). */
  windowMs?: number;
}

/** Long enough to span several of the driver's utilization samples and to catch a bursty tenant between its kernels. */
export const DEFAULT_ACTIVITY_WINDOW_MS = 2000;
