import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { DynamicSnapshot } from '../dynamic/types.js';
import { EnqueueConflict, type ProbeScheduler } from '../jobs/scheduler.js';
import type { GpuIdentity, GpuSummary, MigDeviceSummary } from '../model/gpu.js';
import type { JobPage, JobPosition, JobQuery, ProbeJob } from '../model/job.js';
import type {
  HealthReport,
  ProbeRequestOptions,
  ProbeRequestOutcome,
  ReanalyseOutcome,
  TopodEvent,
  TopologyApi,
  TopologyLookup,
} from '../model/topology-api.js';
import type { ResultLifecycle } from '../results/lifecycle.js';
import type { CheckResult } from '../store/health.js';
import type { JobStore } from '../store/jobs.js';
import type { StoredResult } from '../store/results.js';
import { DocumentCache } from './document-cache.js';
import { GpuRegistry, type RegisteredGpu } from './gpu-registry.js';
import { migViewFor, type DynamicPart } from './merge.js';
import { migDeviceSummary } from './mig-device.js';
import type { ProbePolicy, ServedResult } from './probe-policy.js';

interface ProbeState extends ServedResult {
  lastFinishedJob: ProbeJob | null;
}

export interface TopologyServiceOptions {
  jobs: JobStore;
  /** null when there is no measurement backend (no GPU, or none configured). */
  scheduler: ProbeScheduler | null;
  policy: ProbePolicy;
  /** Re-analyses stored results (at start-up and on request); null without a backend, like the scheduler. */
  lifecycle: ResultLifecycle | null;
  noBackendReason: string | null;
  store: { check(): CheckResult };
  logger: Logger;
}

export const jobUrl = (jobId: string): string => `/v1/jobs/${jobId}`;

/**
 * The daemon's state in memory, composed of the GPU registry (who exists, by
 * which names), the probe policy (which result to serve, when to measure or
 * re-analyse) and the document cache (what the API sends). Probes are started
 * from here; HTTP never waits on them, and active jobs come from the
 * scheduler's memory, not SQLite.
 */
export class TopologyService implements TopologyApi {
  private readonly registry = new GpuRegistry();
  private readonly documents = new DocumentCache();
  private readonly probes = new Map<string, ProbeState>();
  /** Re-analyses running off the event loop, per GPU: the served result is swapped when one ends. */
  private readonly reanalyses = new Map<string, Promise<void>>();
  private readonly events = new EventEmitter<{ event: [TopodEvent] }>();
  private snapshot: DynamicSnapshot | null = null;
  private nvmlEverAvailable = false;
  /** Set by the first syncGpus (boot), so a GPU lookup before it is not taken for a GPU that does not exist. */
  private enumerated = false;

  constructor(private readonly options: TopologyServiceOptions) {
    this.events.setMaxListeners(0);
    const scheduler = options.scheduler;
    if (scheduler) {
      scheduler.on('queued', (job) => this.onJob('probe.queued', job));
      scheduler.on('waiting', (job) => this.onJob('probe.waiting', job));
      scheduler.on('started', (job) => this.onJob('probe.started', job));
      scheduler.on('progress', (job) => this.emit({ type: 'probe.progress', gpuUuid: job.gpuUuid, job, at: now() }));
      scheduler.on('failed', (job) => this.onJob('probe.failed', job));
      scheduler.on('cancelled', (job) => this.onJob('probe.cancelled', job));
      scheduler.on('succeeded', (job, result) => this.onSucceeded(job, result));
    }
  }

  /**
   * The GPUs present now, with canonical driver versions. New ones and ones
   * whose driver changed get a probe when no result exists for
   * (uuid, driver version, probe version).
   */
  syncGpus(identities: GpuIdentity[], requestedBy: string): void {
    this.enumerated = true;
    const seen = new Set<string>();
    const booting = requestedBy === 'boot';
    for (const identity of identities) {
      seen.add(identity.uuid);
      const change = this.registry.upsert(identity);
      if ((change.added || change.returned) && !booting) this.emit({ type: 'gpu.added', gpuUuid: identity.uuid, at: now() });
      if (change.added || change.driverChanged) this.loadProbeState(identity);
      this.ensureProbe(identity.uuid, requestedBy);
      this.refresh(identity.uuid);
    }
    for (const uuid of this.registry.markAbsentExcept(seen)) {
      this.emit({ type: 'gpu.removed', gpuUuid: uuid, at: now() });
      this.refresh(uuid);
    }
  }

  /** Live NVML state: MIG layout and the stable device fields. Re-serialises only documents that changed. */
  applySnapshot(snapshot: DynamicSnapshot, changedMig: string[] = []): void {
    this.snapshot = snapshot;
    if (snapshot.available) this.nvmlEverAvailable = true;
    for (const uuid of changedMig) this.emit({ type: 'mig.changed', gpuUuid: uuid, at: now() });
    this.registry.setMigDevices(snapshot);
    for (const uuid of this.registry.uuids()) this.refresh(uuid);
  }

  /** Whether NVML answered at least once: during an outage afterwards, the GPUs it listed stay as they were. */
  get nvmlWasAvailable(): boolean {
    return this.nvmlEverAvailable;
  }

  /** Whether boot has listed the GPUs: before, a GPU that exists is not known yet. */
  get gpusEnumerated(): boolean {
    return this.enumerated;
  }

  listGpus(): GpuSummary[] {
    return this.registry
      .all()
      .sort((a, b) => Number(b.present) - Number(a.present) || a.identity.index - b.identity.index)
      .map((gpu) => this.summary(gpu));
  }

  getGpu(id: string): GpuSummary | null {
    const found = this.registry.resolve(id);
    return found ? this.summary(found.gpu) : null;
  }

  getMigDevice(id: string): MigDeviceSummary | null {
    const found = this.registry.resolve(id);
    if (!found?.migDeviceUuid) return null;
    const uuid = found.gpu.identity.uuid;
    // The served document's MIG view when there is one (built once per change); else the live layout alone.
    const served = this.documents.get(uuid)?.value;
    const view = served && 'mig' in served ? served.mig : migViewFor(null, this.dynamicPart(uuid).device);
    return view ? migDeviceSummary(this.summary(found.gpu), view, found.migDeviceUuid) : null;
  }

  getTopology(id: string): TopologyLookup {
    const found = this.registry.resolve(id);
    if (!found) return { kind: 'unknown' };
    const { gpu, migDeviceUuid } = found;
    const uuid = gpu.identity.uuid;
    const document = this.documents.get(uuid, migDeviceUuid);
    if (document) return { kind: 'ready', document };
    const active = this.activeJob(uuid);
    if (active) return { kind: 'pending', job: active };
    if (!this.options.scheduler) return { kind: 'unavailable', reason: this.options.noBackendReason ?? 'no measurement backend' };
    const state = this.probes.get(uuid);
    if (migDeviceUuid && state?.result)
      return { kind: 'unavailable', reason: `MIG device ${migDeviceUuid} is not in the current NVML state` };
    const failed = state?.lastFinishedJob;
    if (failed?.error)
      return { kind: 'unavailable', reason: `the last probe (${failed.id}) ended ${failed.state}: ${failed.error.message}` };
    return { kind: 'unavailable', reason: 'this GPU has not been probed yet' };
  }

  requestProbe(id: string, options: ProbeRequestOptions): ProbeRequestOutcome {
    const found = this.registry.resolve(id);
    if (!found) return { kind: 'unknown' };
    const scheduler = this.options.scheduler;
    if (!scheduler) return { kind: 'no-backend', reason: this.options.noBackendReason ?? 'no measurement backend' };
    const { identity } = found.gpu;
    const active = this.activeJob(identity.uuid);
    if (active) {
      if (!options.force) return { kind: 'conflict', job: active };
      scheduler.cancel(active.id, `superseded by a forced probe requested by ${options.requestedBy}`);
    }
    try {
      const job = scheduler.enqueue(identity, {
        reason: 'requested',
        requestedBy: options.requestedBy,
        only: options.only,
        force: options.force,
        evenIfBusy: options.evenIfBusy ?? false,
      });
      return { kind: 'queued', job };
    } catch (error) {
      if (error instanceof EnqueueConflict) return { kind: 'conflict', job: error.job };
      throw error;
    }
  }

  async reanalyse(id: string): Promise<ReanalyseOutcome> {
    const found = this.registry.resolve(id);
    if (!found) return { kind: 'unknown' };
    const uuid = found.gpu.identity.uuid;
    const state = this.probes.get(uuid);
    if (!state?.result) return { kind: 'no-result', reason: 'this GPU has no stored result to re-analyse' };
    const lifecycle = this.options.lifecycle;
    if (!lifecycle) return { kind: 'no-backend', reason: this.options.noBackendReason ?? 'no analysis configured' };
    const source = state.result;
    const rebuilt = await lifecycle.reanalyse(source);
    this.serveRebuilt(uuid, source, rebuilt);
    return {
      kind: 'reanalysed',
      gpuUuid: uuid,
      resultId: rebuilt.id,
      analysisVersion: rebuilt.analysisVersion,
      reanalysedFrom: { resultId: source.id, analysisVersion: source.analysisVersion },
    };
  }

  /** Resolves when the re-analyses start-up began (outdated results) have ended. */
  async whenReanalysed(): Promise<void> {
    while (this.reanalyses.size > 0) await Promise.all(this.reanalyses.values());
  }

  /**
   * Start-up's re-analysis (DESIGN.md: never on a read): a result built by an older analysis is
   * rebuilt from its raw series in a worker while it is served as stored; the rebuilt one replaces it.
   */
  private reanalyseInBackground(uuid: string, source: StoredResult): void {
    const lifecycle = this.options.lifecycle;
    if (!lifecycle || this.reanalyses.has(uuid)) return;
    const running = lifecycle
      .reanalyse(source)
      .then((rebuilt) => this.serveRebuilt(uuid, source, rebuilt))
      .catch((error: unknown) =>
        this.options.logger.warn(
          { err: error, resultId: source.id, gpu: uuid },
          're-analysing a stored result failed; serving it as stored',
        ),
      )
      .finally(() => this.reanalyses.delete(uuid));
    this.reanalyses.set(uuid, running);
  }

  /** Serves a rebuilt result in its source's place, unless a probe stored a newer one meanwhile. */
  private serveRebuilt(uuid: string, source: StoredResult, rebuilt: StoredResult): void {
    const state = this.probes.get(uuid);
    if (state?.result?.id !== source.id) return;
    state.result = rebuilt;
    state.outdated = false;
    this.refresh(uuid);
  }

  getJob(jobId: string): ProbeJob | null {
    const job = this.options.jobs.get(jobId);
    return job ? this.asTold(job) : null;
  }

  listJobs(query: JobQuery): ProbeJob[] {
    return this.options.jobs.list(this.jobQueryByUuid(query)).map((job) => this.asTold(job));
  }

  listJobPage(query: JobQuery, after: JobPosition | null): JobPage {
    const page = this.options.jobs.page(this.jobQueryByUuid(query), after);
    return { ...page, jobs: page.jobs.map((job) => this.asTold(job)) };
  }

  /** A job as the scheduler has told it (its success is stored a turn or a thread's write before it is told). */
  private asTold(job: ProbeJob): ProbeJob {
    return this.options.scheduler?.asTold(job) ?? job;
  }

  /** Jobs are stored by GPU UUID: an index or MIG UUID filter names its GPU's. */
  private jobQueryByUuid(query: JobQuery): JobQuery {
    const gpu = query.gpu ? (this.registry.resolve(query.gpu)?.gpu.identity.uuid ?? query.gpu) : undefined;
    return { ...query, ...(gpu ? { gpu } : {}) };
  }

  subscribe(listener: (event: TopodEvent) => void): () => void {
    this.events.on('event', listener);
    return () => this.events.off('event', listener);
  }

  health(): HealthReport {
    const checks = {
      store: this.options.store.check(),
      backend: this.backendCheck(),
      nvml: this.nvmlCheck(),
      gpus: this.enumerated
        ? { ok: true, detail: `${this.registry.all().filter((g) => g.present).length} present` }
        : { ok: false, detail: 'not enumerated yet: the daemon is booting' },
    };
    return { ready: Object.values(checks).every((c) => c.ok), checks };
  }

  private backendCheck(): CheckResult {
    const scheduler = this.options.scheduler;
    // No backend is a supported state (no GPU here): the daemon still serves what it has.
    if (!scheduler) return { ok: true, detail: `no measurement backend: ${this.options.noBackendReason ?? 'none configured'}` };
    return scheduler.backend.health?.() ?? { ok: true, detail: `measurement backend: ${scheduler.backend.kind}` };
  }

  private nvmlCheck(): CheckResult {
    const nvml = this.snapshot;
    if (!nvml) return { ok: true, detail: 'not read yet' };
    if (nvml.available) return { ok: true, detail: `driver ${nvml.driverVersion}` };
    // Never having NVML is normal (no NVIDIA driver); losing it means the served MIG state may be out of date.
    return this.nvmlEverAvailable
      ? { ok: false, detail: `NVML stopped answering: ${nvml.reason ?? 'unavailable'}; live MIG state is out of date` }
      : { ok: true, detail: `not available: ${nvml.reason ?? 'unavailable'}` };
  }

  private activeJob(uuid: string): ProbeJob | null {
    return this.options.scheduler?.activeFor(uuid) ?? null;
  }

  private loadProbeState(identity: GpuIdentity): void {
    const served = this.options.policy.select(identity);
    this.probes.set(identity.uuid, { ...served, lastFinishedJob: this.options.jobs.list({ gpu: identity.uuid, limit: 1 })[0] ?? null });
    if (served.result && served.outdated) this.reanalyseInBackground(identity.uuid, served.result);
  }

  /** Probe once: queue a job only when the served result is not current and nothing is active. */
  private ensureProbe(uuid: string, requestedBy: string): void {
    const scheduler = this.options.scheduler;
    const gpu = this.registry.get(uuid);
    const state = this.probes.get(uuid);
    if (!scheduler || !gpu?.present || !state) return;
    const reason = this.options.policy.probeReason(gpu.identity, state);
    if (!reason || this.activeJob(uuid)) return;
    try {
      scheduler.enqueue(gpu.identity, { reason, requestedBy, only: null, force: false });
    } catch (error) {
      if (!(error instanceof EnqueueConflict)) throw error;
    }
  }

  private onJob(type: 'probe.queued' | 'probe.waiting' | 'probe.started' | 'probe.failed' | 'probe.cancelled', job: ProbeJob): void {
    const state = this.probes.get(job.gpuUuid);
    if (state && (type === 'probe.failed' || type === 'probe.cancelled')) state.lastFinishedJob = job;
    this.emit({ type, gpuUuid: job.gpuUuid, job, at: now() });
    this.refresh(job.gpuUuid);
  }

  private onSucceeded(job: ProbeJob, result: StoredResult): void {
    const gpu = this.registry.get(job.gpuUuid);
    if (gpu) this.probes.set(job.gpuUuid, { ...this.options.policy.afterProbe(gpu.identity, result), lastFinishedJob: job });
    this.emit({ type: 'probe.succeeded', gpuUuid: job.gpuUuid, job, at: now() });
    this.refresh(job.gpuUuid);
  }

  /** Rebuilds a GPU's documents; a new ETag (and an event) only when the bytes changed. */
  private refresh(uuid: string): void {
    const gpu = this.registry.get(uuid);
    if (!gpu) return;
    const state = this.probes.get(uuid);
    const active = this.activeJob(uuid);
    const summary = this.summary(gpu, active);
    const etag = this.documents.update(
      uuid,
      state?.result?.document ?? null,
      { summary, jobUrl: active ? jobUrl(active.id) : null },
      this.dynamicPart(uuid),
      this.registry.migDeviceUuids(uuid),
    );
    if (etag) this.emit({ type: 'topology.changed', gpuUuid: uuid, etag, at: now() });
  }

  private dynamicPart(uuid: string): DynamicPart {
    const snapshot = this.snapshot;
    return {
      available: snapshot?.available ?? false,
      reason: snapshot ? snapshot.reason : 'NVML has not been read',
      driverVersion: snapshot?.driverVersion ?? null,
      device: snapshot?.devices.find((d) => d.uuid === uuid) ?? null,
    };
  }

  /** `active`: the GPU's queued or running job, when the caller has already looked it up. */
  private summary(gpu: RegisteredGpu, active = this.activeJob(gpu.identity.uuid)): GpuSummary {
    const state = this.probes.get(gpu.identity.uuid);
    const result = state?.result ?? null;
    const last = state?.lastFinishedJob ?? null;
    const status = active
      ? active.state === 'queued' || active.state === 'waiting' || active.state === 'running'
        ? active.state
        : 'queued'
      : result
        ? 'probed'
        : last?.state === 'failed'
          ? 'failed'
          : 'unprobed';
    return {
      ...gpu.identity,
      simulated: result?.simulated ?? this.options.scheduler?.backend.simulated ?? false,
      present: gpu.present,
      probe: {
        status,
        stale: (state?.staleReason ?? null) !== null,
        staleReason: state?.staleReason ?? null,
        lastResultAt: result?.createdAt ?? null,
        activeJobId: active?.id ?? null,
      },
      migDeviceUuids: this.registry.migDeviceUuids(gpu.identity.uuid),
    };
  }

  private emit(event: TopodEvent): void {
    this.events.emit('event', event);
  }
}

const now = (): string => new Date().toISOString();
