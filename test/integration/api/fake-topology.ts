/**
 * In-memory TopologyApi for the HTTP tests: no store, no GPU, no daemon.
 * Tests set what it answers and read back what routes asked of it.
 */
import type { JobPage, JobPosition, JobQuery, ProbeJob } from '../../../server/model/job.js';
import type { GpuSummary, MigDeviceSummary } from '../../../server/model/gpu.js';
import type {
  ProbeRequestOptions,
  ProbeRequestOutcome,
  ReanalyseOutcome,
  TopodEvent,
  TopologyApi,
  TopologyLookup,
} from '../../../server/model/topology-api.js';

export function makeGpu(overrides: Partial<GpuSummary> = {}): GpuSummary {
  const index = overrides.index ?? 0;
  return {
    uuid: `GPU-0000000${index}-aaaa-bbbb-cccc-dddddddddddd`,
    index,
    name: 'Simulated H100',
    vendor: 'nvidia',
    pciBusId: `00000000:0${index}:00.0`,
    driverVersion: '555.42.06',
    simulated: true,
    present: true,
    probe: { status: 'probed', stale: false, staleReason: null, lastResultAt: '2025-01-01T00:00:00.000Z', activeJobId: null },
    migDeviceUuids: [],
    ...overrides,
  };
}

let jobCounter = 0;

export function makeJob(overrides: Partial<ProbeJob> = {}): ProbeJob {
  jobCounter += 1;
  return {
    id: `job-${jobCounter}`,
    gpuUuid: makeGpu().uuid,
    state: 'queued',
    phase: null,
    progress: 0,
    error: null,
    reason: 'requested',
    requestedBy: 'api:127.0.0.1',
    only: null,
    force: false,
    evenIfBusy: false,
    waitingSince: null,
    resultId: null,
    createdAt: '2025-01-01T00:00:00.000Z',
    startedAt: null,
    finishedAt: null,
    ...overrides,
  };
}

export class FakeTopology implements TopologyApi {
  gpusEnumerated = true;
  gpus: GpuSummary[] = [makeGpu()];
  jobs: ProbeJob[] = [];
  topologies = new Map<string, TopologyLookup>();
  /** Overrides what requestProbe answers; by default it queues a job for a known GPU. */
  probeOutcome: ((gpu: GpuSummary | null, options: ProbeRequestOptions) => ProbeRequestOutcome) | null = null;
  healthState: ReturnType<TopologyApi['health']> = { ready: true, checks: { store: { ok: true, detail: 'open' } } };
  readonly probeRequests: Array<{ id: string; options: ProbeRequestOptions }> = [];
  readonly jobQueries: JobQuery[] = [];
  /** Where each listJobPage call started (null: the first page). */
  readonly jobPageStarts: Array<JobPosition | null> = [];
  /** What getMigDevice answers, by MIG device UUID (any case). */
  migDevices: MigDeviceSummary[] = [];
  readonly listeners = new Set<(event: TopodEvent) => void>();

  listGpus(): GpuSummary[] {
    return this.gpus;
  }

  getGpu(id: string): GpuSummary | null {
    return this.gpus.find((gpu) => String(gpu.index) === id || gpu.uuid === id || gpu.migDeviceUuids.includes(id)) ?? null;
  }

  getMigDevice(id: string): MigDeviceSummary | null {
    return this.migDevices.find((device) => device.uuid.toLowerCase() === id.toLowerCase()) ?? null;
  }

  getTopology(id: string): TopologyLookup {
    const gpu = this.getGpu(id);
    if (gpu === null) return { kind: 'unknown' };
    return this.topologies.get(gpu.uuid) ?? { kind: 'unavailable', reason: 'not set by the test' };
  }

  requestProbe(id: string, options: ProbeRequestOptions): ProbeRequestOutcome {
    this.probeRequests.push({ id, options });
    const gpu = this.getGpu(id);
    if (this.probeOutcome) return this.probeOutcome(gpu, options);
    if (gpu === null) return { kind: 'unknown' };
    const job = makeJob({
      gpuUuid: gpu.uuid,
      only: options.only,
      force: options.force,
      evenIfBusy: options.evenIfBusy ?? false,
      requestedBy: options.requestedBy,
    });
    this.jobs.push(job);
    return { kind: 'queued', job };
  }

  /** What reanalyse answers for a known GPU; by default it has no stored result. */
  reanalyseOutcome: ((gpu: GpuSummary) => ReanalyseOutcome) | null = null;
  reanalyseRequests: string[] = [];

  async reanalyse(id: string): Promise<ReanalyseOutcome> {
    this.reanalyseRequests.push(id);
    const gpu = this.getGpu(id);
    if (gpu === null) return { kind: 'unknown' };
    return this.reanalyseOutcome
      ? this.reanalyseOutcome(gpu)
      : { kind: 'no-result', reason: 'this GPU has no stored result to re-analyse' };
  }

  getJob(jobId: string): ProbeJob | null {
    return this.jobs.find((job) => job.id === jobId) ?? null;
  }

  listJobs(query: JobQuery): ProbeJob[] {
    this.jobQueries.push(query);
    const gpu = query.gpu === undefined ? null : this.getGpu(query.gpu);
    return this.jobs
      .filter((job) => (gpu === null || job.gpuUuid === gpu.uuid) && (query.state === undefined || job.state === query.state))
      .slice(0, query.limit);
  }

  /** Pages through `jobs` in their array order; a position names the job it follows by id. */
  listJobPage(query: JobQuery, after: JobPosition | null): JobPage {
    this.jobQueries.push(query);
    this.jobPageStarts.push(after);
    const gpu = query.gpu === undefined ? null : this.getGpu(query.gpu);
    const matching = this.jobs.filter(
      (job) => (gpu === null || job.gpuUuid === gpu.uuid) && (query.state === undefined || job.state === query.state),
    );
    const start = after ? matching.findIndex((job) => job.id === after.id) + 1 : 0;
    const limit = query.limit ?? 100;
    const jobs = matching.slice(start, start + limit);
    const last = jobs.at(-1);
    return { jobs, next: start + limit < matching.length && last ? { createdAt: last.createdAt, id: last.id } : null };
  }

  subscribe(listener: (event: TopodEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: TopodEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  health(): ReturnType<TopologyApi['health']> {
    return this.healthState;
  }
}
