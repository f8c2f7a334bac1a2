import type { GpuIdentity } from '../model/gpu.js';
import type { ProbeOp, ProbeOps } from '../protocol/ops.js';

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
  /** Whether it can still measure (the native probe executable is still there); absent: always. */
  health?(): { ok: boolean; detail: string };
  close(): Promise<void>;
}
