import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { DynamicSnapshot, NvmlDeviceState } from '../dynamic/types.js';
import type { GpuIdentity } from '../model/gpu.js';
import { EnqueueConflict, type ProbeScheduler } from '../jobs/scheduler.js';
import type { JobStore } from '../store/jobs.js';
import type { ResultStore, StoredResult } from '../store/results.js';
import type { JobQuery, ProbeJob } from './../model/job.js';
import type { GpuSummary } from './../model/gpu.js';
import type { PreparedDocument, ProbeRequestOptions, ProbeRequestOutcome, TopodEvent, TopologyApi, TopologyLookup } from './../model/topology-api.js';
import { mergeMigInstance, mergeTopology, type DynamicPart, type StatusPart } from './merge.js';
import { prepareDocument } from './prepare.js';

interface GpuEntry {
  identity: GpuIdentity;
  present: boolean;
  /** The result served: fresh for the current key, or the newest older one (stale). */
  result: StoredResult | null;
  staleReason: string | null;
  lastFinishedJob: ProbeJob | null;
  document: PreparedDocument | null;
  migDocuments: Map<string, PreparedDocument>;
}

export interface TopologyServiceOptions {
  results: ResultStore;
  jobs: JobStore;
  /** null when there is no measurement backend (no GPU, or none configured). */
  scheduler: ProbeScheduler | null;
  noBackendReason: string | null;
  logger: Logger;
}

export const jobUrl = (jobId: string): string => `/v1/jobs/${jobId}`;

/**
 * The daemon's state in memory: which GPUs exist, which result each serves,
 * the live NVML state, and the pre-serialised documents the API hands out.
 * Probes are started from here (probe once per key); HTTP never waits on them.
 */
export class TopologyService implements TopologyApi {
  private readonly gpus = new Map<string, GpuEntry>();
  private readonly migParents = new Map<string, string>();
  private readonly events = new EventEmitter<{ event: [TopodEvent] }>();
  private snapshot: DynamicSnapshot | null = null;

  constructor(private readonly options: TopologyServiceOptions) {
    this.events.setMaxListeners(0);
    const scheduler = options.scheduler;
    if (scheduler) {
      scheduler.on('queued', (job) => this.onJob('probe.queued', job));
      scheduler.on('started', (job) => this.onJob('probe.started', job));
      scheduler.on('progress', (job) => this.emit({ type: 'probe.progress', gpuUuid: job.gpuUuid, job, at: now() }));
      scheduler.on('failed', (job) => this.onJob('probe.failed', job));
      scheduler.on('cancelled', (job) => this.onJob('probe.cancelled', job));
      scheduler.on('succeeded', (job, result) => this.onSucceeded(job, result));
    }
  }

  /**
   * The GPUs present now (from NVML, or the backend's own list without NVML).
   * New ones and ones whose driver changed get a probe when no result exists
   * for (uuid, driver version, probe version).
   */
  syncGpus(identities: GpuIdentity[], requestedBy: string): void {
    const seen = new Set<string>();
    for (const identity of identities) {
      seen.add(identity.uuid);
      const entry = this.gpus.get(identity.uuid);
      if (!entry) {
        this.gpus.set(identity.uuid, this.loadEntry(identity));
        if (requestedBy !== 'boot') this.emit({ type: 'gpu.added', gpuUuid: identity.uuid, at: now() });
      } else {
        const driverChanged = entry.identity.driverVersion !== identity.driverVersion;
        entry.identity = identity;
        if (!entry.present && requestedBy !== 'boot') this.emit({ type: 'gpu.added', gpuUuid: identity.uuid, at: now() });
        entry.present = true;
        if (driverChanged) Object.assign(entry, this.loadEntry(identity));
      }
      this.ensureProbe(identity.uuid, requestedBy);
      this.refresh(identity.uuid);
    }
    for (const [uuid, entry] of this.gpus) {
      if (seen.has(uuid) || !entry.present) continue;
      entry.present = false;
      this.emit({ type: 'gpu.removed', gpuUuid: uuid, at: now() });
      this.refresh(uuid);
    }
  }

  /** Live NVML state: identities (driver version), MIG layout. Re-serialises only documents that changed. */
  applySnapshot(snapshot: DynamicSnapshot, changedMig: string[] = []): void {
    this.snapshot = snapshot;
    for (const uuid of changedMig) this.emit({ type: 'mig.changed', gpuUuid: uuid, at: now() });
    this.migParents.clear();
    for (const device of snapshot.devices) {
      for (const instance of device.mig.instances) if (instance.migDeviceUuid) this.migParents.set(instance.migDeviceUuid.toLowerCase(), device.uuid);
    }
    for (const uuid of this.gpus.keys()) this.refresh(uuid);
  }

  listGpus(): GpuSummary[] {
    return [...this.gpus.values()].sort((a, b) => Number(b.present) - Number(a.present) || a.identity.index - b.identity.index).map((e) => this.summary(e));
  }

  getGpu(id: string): GpuSummary | null {
    const found = this.resolve(id);
    return found ? this.summary(found.entry) : null;
  }

  getTopology(id: string): TopologyLookup {
    const found = this.resolve(id);
    if (!found) return { kind: 'unknown' };
    const { entry, migDeviceUuid } = found;
    const document = migDeviceUuid ? entry.migDocuments.get(migDeviceUuid) : entry.document;
    if (document) return { kind: 'ready', document };
    const active = this.options.jobs.activeFor(entry.identity.uuid);
    if (active) return { kind: 'pending', job: active };
    if (!this.options.scheduler) return { kind: 'unavailable', reason: this.options.noBackendReason ?? 'no measurement backend' };
    if (migDeviceUuid && entry.result) return { kind: 'unavailable', reason: `MIG device ${migDeviceUuid} is not in the current NVML state` };
    const failed = entry.lastFinishedJob;
    if (failed?.error) return { kind: 'unavailable', reason: `the last probe (${failed.id}) ended ${failed.state}: ${failed.error.message}` };
    return { kind: 'unavailable', reason: 'this GPU has not been probed yet' };
  }

  requestProbe(id: string, options: ProbeRequestOptions): ProbeRequestOutcome {
    const found = this.resolve(id);
    if (!found) return { kind: 'unknown' };
    const scheduler = this.options.scheduler;
    if (!scheduler) return { kind: 'no-backend', reason: this.options.noBackendReason ?? 'no measurement backend' };
    const { identity } = found.entry;
    const active = this.options.jobs.activeFor(identity.uuid);
    if (active) {
      if (!options.force) return { kind: 'conflict', job: active };
      scheduler.cancel(active.id, `superseded by a forced probe requested by ${options.requestedBy}`);
    }
    try {
      const job = scheduler.enqueue(identity, { reason: 'requested', requestedBy: options.requestedBy, only: options.only, force: options.force });
      return { kind: 'queued', job };
    } catch (error) {
      if (error instanceof EnqueueConflict) return { kind: 'conflict', job: error.job };
      throw error;
    }
  }

  getJob(jobId: string): ProbeJob | null {
    return this.options.jobs.get(jobId);
  }

  listJobs(query: JobQuery): ProbeJob[] {
    const gpu = query.gpu ? (this.resolve(query.gpu)?.entry.identity.uuid ?? query.gpu) : undefined;
    return this.options.jobs.list({ ...query, ...(gpu ? { gpu } : {}) });
  }

  subscribe(listener: (event: TopodEvent) => void): () => void {
    this.events.on('event', listener);
    return () => this.events.off('event', listener);
  }

  health(): { ready: boolean; checks: Record<string, { ok: boolean; detail: string }> } {
    const backendOk = this.options.scheduler !== null;
    const nvml = this.snapshot;
    return {
      ready: true,
      checks: {
        store: { ok: true, detail: 'SQLite open and migrated' },
        backend: { ok: backendOk, detail: backendOk ? `measurement backend: ${this.options.scheduler?.backend.kind}` : (this.options.noBackendReason ?? 'none') },
        nvml: { ok: nvml?.available ?? false, detail: nvml ? (nvml.available ? `driver ${nvml.driverVersion}` : (nvml.reason ?? 'unavailable')) : 'not read yet' },
        gpus: { ok: true, detail: `${[...this.gpus.values()].filter((g) => g.present).length} present` },
      },
    };
  }

  private loadEntry(identity: GpuIdentity): GpuEntry {
    const { results } = this.options;
    const probeVersion = this.options.scheduler?.backend.probeVersion;
    const fresh = probeVersion ? results.latestFor({ gpuUuid: identity.uuid, driverVersion: identity.driverVersion, probeVersion }) : null;
    const result = fresh ?? results.latestForGpu(identity.uuid);
    return {
      identity,
      present: true,
      result,
      staleReason: fresh || !result ? null : staleness(result, identity, probeVersion),
      lastFinishedJob: this.options.jobs.list({ gpu: identity.uuid, limit: 1 })[0] ?? null,
      document: null,
      migDocuments: new Map(),
    };
  }

  /** Probe once: queue a job only when the current key has no result and nothing is active. */
  private ensureProbe(uuid: string, requestedBy: string): void {
    const scheduler = this.options.scheduler;
    const entry = this.gpus.get(uuid);
    if (!scheduler || !entry || !entry.present) return;
    if (entry.result && entry.staleReason === null) return;
    if (this.options.jobs.activeFor(uuid)) return;
    const reason = entry.staleReason ? (entry.staleReason.startsWith('driver') ? 'driver-changed' : 'probe-version-changed') : 'first-probe';
    try {
      scheduler.enqueue(entry.identity, { reason, requestedBy, only: null, force: false });
    } catch (error) {
      if (!(error instanceof EnqueueConflict)) throw error;
    }
  }

  private onJob(type: 'probe.queued' | 'probe.started' | 'probe.failed' | 'probe.cancelled', job: ProbeJob): void {
    const entry = this.gpus.get(job.gpuUuid);
    if (entry && (type === 'probe.failed' || type === 'probe.cancelled')) entry.lastFinishedJob = job;
    this.emit({ type, gpuUuid: job.gpuUuid, job, at: now() });
    this.refresh(job.gpuUuid);
  }

  private onSucceeded(job: ProbeJob, result: StoredResult): void {
    const entry = this.gpus.get(job.gpuUuid);
    if (entry) {
      entry.result = result;
      entry.lastFinishedJob = job;
      const current = entry.identity.driverVersion === result.driverVersion;
      entry.staleReason = current ? null : staleness(result, entry.identity, result.probeVersion);
    }
    this.emit({ type: 'probe.succeeded', gpuUuid: job.gpuUuid, job, at: now() });
    this.refresh(job.gpuUuid);
  }

  /** Rebuilds a GPU's documents; a new ETag (and an event) only when the bytes changed. */
  private refresh(uuid: string): void {
    const entry = this.gpus.get(uuid);
    if (!entry) return;
    if (!entry.result) {
      entry.document = null;
      entry.migDocuments.clear();
      return;
    }
    const active = this.options.jobs.activeFor(uuid);
    const status: StatusPart = { summary: this.summary(entry, active), jobUrl: active ? jobUrl(active.id) : null };
    const dynamic = this.dynamicPart(uuid);
    const merged = mergeTopology(entry.result.document, status, dynamic);
    const next = prepareDocument(merged);
    if (next.etag !== entry.document?.etag) {
      entry.document = next;
      this.emit({ type: 'topology.changed', gpuUuid: uuid, etag: next.etag, at: now() });
    }
    const migDocuments = new Map<string, PreparedDocument>();
    for (const instance of dynamic.device?.mig.instances ?? []) {
      if (!instance.migDeviceUuid) continue;
      const view = mergeMigInstance(merged, instance.migDeviceUuid);
      if (!view) continue;
      const key = instance.migDeviceUuid.toLowerCase();
      const previous = entry.migDocuments.get(key);
      const prepared = prepareDocument(view);
      migDocuments.set(key, previous?.etag === prepared.etag ? previous : prepared);
    }
    entry.migDocuments = migDocuments;
  }

  private dynamicPart(uuid: string): DynamicPart {
    const snapshot = this.snapshot;
    const device: NvmlDeviceState | null = snapshot?.devices.find((d) => d.uuid === uuid) ?? null;
    return {
      available: snapshot?.available ?? false,
      reason: snapshot ? snapshot.reason : 'NVML has not been read',
      driverVersion: snapshot?.driverVersion ?? null,
      device,
    };
  }

  /** `active`: the GPU's queued or running job, when the caller has already looked it up. */
  private summary(entry: GpuEntry, active = this.options.jobs.activeFor(entry.identity.uuid)): GpuSummary {
    const last = entry.lastFinishedJob;
    const status = active ? (active.state === 'running' ? 'running' : 'queued') : entry.result ? 'probed' : last?.state === 'failed' ? 'failed' : 'unprobed';
    const device = this.snapshot?.devices.find((d) => d.uuid === entry.identity.uuid);
    return {
      ...entry.identity,
      simulated: entry.result?.simulated ?? this.options.scheduler?.backend.simulated ?? false,
      present: entry.present,
      probe: {
        status,
        stale: entry.staleReason !== null,
        staleReason: entry.staleReason,
        lastResultAt: entry.result?.createdAt ?? null,
        activeJobId: active?.id ?? null,
      },
      migDeviceUuids: (device?.mig.instances ?? []).flatMap((i) => (i.migDeviceUuid ? [i.migDeviceUuid] : [])),
    };
  }

  /** `id`: an index among present GPUs, a GPU UUID, or a MIG device UUID (case-insensitive). */
  private resolve(id: string): { entry: GpuEntry; migDeviceUuid: string | null } | null {
    if (/^\d+$/.test(id)) {
      const index = Number(id);
      const entry = [...this.gpus.values()].find((e) => e.present && e.identity.index === index);
      return entry ? { entry, migDeviceUuid: null } : null;
    }
    const key = id.toLowerCase();
    if (key.startsWith('mig-')) {
      const parent = this.migParents.get(key);
      const entry = parent ? this.gpus.get(parent) : undefined;
      return entry ? { entry, migDeviceUuid: key } : null;
    }
    const entry = [...this.gpus.values()].find((e) => e.identity.uuid.toLowerCase() === key);
    return entry ? { entry, migDeviceUuid: null } : null;
  }

  private emit(event: TopodEvent): void {
    this.events.emit('event', event);
  }
}

function staleness(result: StoredResult, identity: GpuIdentity, probeVersion: string | undefined): string {
  if (result.driverVersion !== identity.driverVersion) return `driver changed from ${result.driverVersion} to ${identity.driverVersion}`;
  if (probeVersion && result.probeVersion !== probeVersion) return `probe changed from ${result.probeVersion} to ${probeVersion}`;
  return 'result is for another configuration';
}

const now = (): string => new Date().toISOString();
