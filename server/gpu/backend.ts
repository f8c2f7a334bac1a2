import type { ProbeOp, ProbeOps } from './protocol.js';

/** Who a GPU is, as far as caching and the API are concerned. */
export interface GpuIdentity {
  uuid: string;
  index: number;
  name: string;
  vendor: 'nvidia' | 'amd';
  pciBusId: string | null;
  /** Driver release (NVML: "580.95.05"); cache key together with uuid and probe version. */
  driverVersion: string;
}

export interface RequestOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * A conversation with one GPU's measurement backend. Discovery talks only to
 * this: it cannot tell the native probe from the simulated GPU.
 */
export interface ProbeChannel {
  request<O extends ProbeOp>(op: O, args: ProbeOps[O]['args'], options?: RequestOptions): Promise<ProbeOps[O]['result']>;
  close(): Promise<void>;
}

export interface MeasurementBackend {
  readonly kind: 'native' | 'sim';
  /** Everything this backend produced is marked simulated in the document. */
  readonly simulated: boolean;
  /** The probe version that goes into the cache key. */
  readonly probeVersion: string;
  /** GPUs this backend can measure (used when NVML is absent). */
  listDevices(): Promise<GpuIdentity[]>;
  /** A channel pinned to one GPU. */
  open(gpu: GpuIdentity): Promise<ProbeChannel>;
  close(): Promise<void>;
}

/** Thrown by channels when the backend answered `ok: false` or died. */
export class ProbeError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ProbeError';
  }
}
