/**
 * What the HTTP layer may ask of the rest of the daemon. Routes never touch
 * SQLite, NVML or a probe directly (DESIGN.md: clean seams); they read these.
 */
import type { GpuIdentity } from '../gpu/backend.js';
import type { ElementName } from './document.js';

export const JOB_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

export interface ProbeJob {
  id: string;
  gpuUuid: string;
  state: JobState;
  phase: string | null;
  progress: number; // 0..1
  error: { code: string; message: string } | null;
  reason: string; // why it was queued: "first-probe", "driver-changed", "requested", ...
  requestedBy: string; // "boot", "nvml-change" (a GPU appeared or its driver changed), "api:<client address>"
  only: ElementName[] | null;
  force: boolean;
  resultId: number | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export type GpuProbeStatus = 'unprobed' | 'queued' | 'running' | 'probed' | 'failed';

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

/** A document ready to send: serialised once per change, never per request. */
export interface PreparedDocument {
  body: string;
  etag: string;
}

export type TopologyLookup =
  | { kind: 'ready'; document: PreparedDocument }
  | { kind: 'pending'; job: ProbeJob }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'unknown' };

export interface ProbeRequestOptions {
  only: ElementName[] | null;
  force: boolean;
  requestedBy: string;
}

export type ProbeRequestOutcome = { kind: 'queued'; job: ProbeJob } | { kind: 'conflict'; job: ProbeJob } | { kind: 'unknown' } | { kind: 'no-backend'; reason: string };

export interface JobQuery {
  gpu?: string;
  state?: JobState;
  limit?: number;
}

export type TopodEvent =
  | { type: 'gpu.added' | 'gpu.removed'; gpuUuid: string; at: string }
  | { type: 'mig.changed'; gpuUuid: string; at: string }
  | { type: 'topology.changed'; gpuUuid: string; etag: string; at: string }
  | { type: 'probe.queued' | 'probe.started' | 'probe.progress' | 'probe.succeeded' | 'probe.failed' | 'probe.cancelled'; gpuUuid: string; job: ProbeJob; at: string };

/** The read/command surface routes use. Implemented by TopologyService. */
export interface TopologyApi {
  listGpus(): GpuSummary[];
  /** `id` is an index, a GPU UUID or a MIG device UUID. */
  getGpu(id: string): GpuSummary | null;
  getTopology(id: string): TopologyLookup;
  requestProbe(id: string, options: ProbeRequestOptions): ProbeRequestOutcome;
  getJob(jobId: string): ProbeJob | null;
  listJobs(query: JobQuery): ProbeJob[];
  /** Subscribe to events; returns the unsubscribe function. */
  subscribe(listener: (event: TopodEvent) => void): () => void;
  health(): { ready: boolean; checks: Record<string, { ok: boolean; detail: string }> };
}
