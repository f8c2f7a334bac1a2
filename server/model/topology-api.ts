/**
 * What the HTTP layer may ask of the rest of the daemon. Routes never touch
 * SQLite, NVML or a probe directly (DESIGN.md: clean seams); they read these.
 */
import type { GpuTopologyDocument, MigInstanceTopologyDocument, ProbeTarget } from './document.js';
import type { GpuSummary, MigDeviceSummary } from './gpu.js';
import type { JobPage, JobPosition, JobQuery, ProbeJob } from './job.js';

/**
 * A document ready to send: serialised once per change, never per request,
 * with the object it was serialised from, which every face reads (never
 * parsed back from the body). Treat `value` as immutable.
 */
export interface PreparedDocument<T = GpuTopologyDocument | MigInstanceTopologyDocument> {
  value: T;
  body: string;
  etag: string;
}

export type TopologyLookup =
  | { kind: 'ready'; document: PreparedDocument }
  | { kind: 'pending'; job: ProbeJob }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'unknown' };

export interface ProbeRequestOptions {
  only: ProbeTarget[] | null;
  force: boolean;
  /** Measure even while other processes use the GPU. */
  evenIfBusy?: boolean;
  requestedBy: string;
}

export type ProbeRequestOutcome =
  | { kind: 'queued'; job: ProbeJob }
  | { kind: 'conflict'; job: ProbeJob }
  | { kind: 'unknown' }
  | { kind: 'no-backend'; reason: string };

export type TopodEvent =
  | { type: 'gpu.added' | 'gpu.removed'; gpuUuid: string; at: string }
  | { type: 'mig.changed'; gpuUuid: string; at: string }
  | { type: 'topology.changed'; gpuUuid: string; etag: string; at: string }
  | {
      type: 'probe.queued' | 'probe.waiting' | 'probe.started' | 'probe.progress' | 'probe.succeeded' | 'probe.failed' | 'probe.cancelled';
      gpuUuid: string;
      job: ProbeJob;
      at: string;
    };

export type ReanalyseOutcome =
  | {
      kind: 'reanalysed';
      gpuUuid: string;
      resultId: number;
      analysisVersion: string;
      reanalysedFrom: { resultId: number; analysisVersion: string };
    }
  | { kind: 'no-result'; reason: string }
  | { kind: 'no-backend'; reason: string }
  | { kind: 'unknown' };

export interface HealthReport {
  /** Every check ok. */
  ready: boolean;
  checks: Record<string, { ok: boolean; detail: string }>;
}

/** The read/command surface routes use. Implemented by TopologyService. */
export interface TopologyApi {
  /** False while the daemon boots, until its GPUs are listed: a GPU not known then may still exist. */
  readonly gpusEnumerated: boolean;
  listGpus(): GpuSummary[];
  /** `id` is an index, a GPU UUID or a MIG device UUID. */
  getGpu(id: string): GpuSummary | null;
  /** The MIG device a MIG device UUID names (any case); null for any other id or a MIG device NVML no longer lists. */
  getMigDevice(id: string): MigDeviceSummary | null;
  getTopology(id: string): TopologyLookup;
  requestProbe(id: string, options: ProbeRequestOptions): ProbeRequestOutcome;
  getJob(jobId: string): ProbeJob | null;
  listJobs(query: JobQuery): ProbeJob[];
  /** A page of jobs, newest first, starting after `after` (null: the newest). */
  listJobPage(query: JobQuery, after: JobPosition | null): JobPage;
  /** Subscribe to events; returns the unsubscribe function. */
  subscribe(listener: (event: TopodEvent) => void): () => void;
  /** Rebuilds the served result in a worker; resolves once the rebuilt one is stored and served. */
  reanalyse(id: string): Promise<ReanalyseOutcome>;
  health(): HealthReport;
}
