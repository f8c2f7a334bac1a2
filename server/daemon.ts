import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { ANALYSIS_VERSION, carryOverRaw, discover, reanalyse } from './discovery/index.js';
import { createDynamicSource } from './dynamic/source.js';
import { DynamicPoller } from './dynamic/poller.js';
import type { DynamicSnapshot, DynamicSource } from './dynamic/types.js';
import type { MeasurementBackend } from './gpu/backend.js';
import type { GpuIdentity } from './model/gpu.js';
import { selectBackend } from './gpu/select-backend.js';
import type { Analysis } from './jobs/analysis.js';
import { ResultReanalyser } from './jobs/reanalyser.js';
import { ProbeScheduler } from './jobs/scheduler.js';
import { openDatabase, type Db } from './store/database.js';
import { GpuStore } from './store/gpus.js';
import { JobStore } from './store/jobs.js';
import { StoreHealth } from './store/health.js';
import { ResultStore } from './store/results.js';
import { readKernelModuleVersion, resolveDriverIdentity } from './topology/driver-identity.js';
import { ProbePolicy } from './topology/probe-policy.js';
import { TopologyService } from './topology/service.js';
import { TOPOD_VERSION } from './version.js';

export interface Daemon {
  app: FastifyInstance;
  topology: TopologyService;
  poller: DynamicPoller | null;
  backend: MeasurementBackend | null;
  db: Db;
  /** Boot: fail interrupted jobs, read NVML, enumerate GPUs, queue the probes that are missing. */
  start(): Promise<void>;
  /** Resolves when no probe is queued or running. */
  whenIdle(): Promise<void>;
  close(): Promise<void>;
}

export interface DaemonOptions {
  logger?: Logger;
  /** Tests inject backends and dynamic sources; production builds them from the config. */
  backend?: MeasurementBackend | null;
  dynamicSource?: DynamicSource;
  /** The kernel module's driver version when NVML is absent (tests inject it; default: /proc/driver/nvidia/version). */
  kernelDriverVersion?: () => string | null;
}

/** The analysis the jobs and the re-analyser use: server/discovery's, at its current version. */
export const DISCOVERY_ANALYSIS: Analysis = { version: ANALYSIS_VERSION, reanalyse: (raw) => reanalyse(raw), carryOverRaw };

/** NVML is the authority for which GPUs exist when it answers; otherwise the backend's own list. */
function identitiesFromSnapshot(snapshot: DynamicSnapshot): GpuIdentity[] {
  return snapshot.devices.map((device) => ({
    uuid: device.uuid,
    index: device.index,
    name: device.name,
    vendor: 'nvidia',
    pciBusId: device.pciBusId,
    driverVersion: snapshot.driverVersion ?? 'unknown',
    driverSource: 'nvml',
  }));
}

export async function createDaemon(config: Config, options: DaemonOptions = {}): Promise<Daemon> {
  const logger = options.logger ?? pino({ level: config.logLevel });
  const db = openDatabase(config.dbPath);
  const results = new ResultStore(db);
  const jobs = new JobStore(db);
  const gpuStore = new GpuStore(db);

  const selection =
    options.backend !== undefined
      ? { backend: options.backend, reason: options.backend ? `${options.backend.kind} backend (injected)` : 'no backend (injected)' }
      : await selectBackend({ choice: config.backend, simModels: config.simModels, probePath: config.probePath, probeDeadlineMs: config.probeDeadlineMs, probeEnv: config.probeEnv, logger });
  const backend = selection.backend;
  if (backend) logger.info({ backend: backend.kind, probeVersion: backend.probeVersion }, `measurement backend: ${selection.reason}`);
  else logger.warn({ reason: selection.reason }, 'no measurement backend: GPUs are listed but not probed');

  const analysis = DISCOVERY_ANALYSIS;
  const scheduler = backend ? new ProbeScheduler({ db, jobs, results, backend, discover, analysis, concurrency: config.probeConcurrency, logger }) : null;
  const reanalyser = backend ? new ResultReanalyser({ db, results, analysis, logger }) : null;
  const policy = new ProbePolicy({ results, probeVersion: backend?.probeVersion ?? null, reanalyser, logger });
  const store = new StoreHealth(db, config.dbPath);
  const topology = new TopologyService({ jobs, scheduler, policy, store, noBackendReason: backend ? null : selection.reason, logger });
  const kernelDriverVersion = options.kernelDriverVersion ?? (() => readKernelModuleVersion());
  const dynamicSource = options.dynamicSource ?? createDynamicSource({ libraryPath: config.nvmlLib, addonPath: config.nvmlAddon, logger });
  const poller = new DynamicPoller({ source: dynamicSource, pollMs: config.pollMs, logger });
  const app = await buildApp({ config, topology, logger, version: TOPOD_VERSION });

  /**
   * The backend's own GPU list (no NVML), with each driver version made
   * canonical: the kernel module's release, else the one remembered for that
   * GPU, else the runtime's — so the cache key does not depend on which source is up.
   */
  async function backendIdentities(): Promise<GpuIdentity[]> {
    const listed = (await backend?.listDevices()) ?? [];
    const kernelModule = listed.some((gpu) => gpu.vendor === 'nvidia') ? kernelDriverVersion() : null;
    return listed.map((gpu) => {
      const driver = resolveDriverIdentity({
        kernelModule: gpu.vendor === 'nvidia' ? kernelModule : null,
        lastKnown: gpuStore.lastKnownDriver(gpu.uuid),
        runtime: gpu.driverVersion,
      });
      return driver ? { ...gpu, driverVersion: driver.version, driverSource: driver.source } : gpu;
    });
  }

  /** The GPUs of an NVML snapshot the topology service already has (applySnapshot). */
  async function enumerate(snapshot: DynamicSnapshot, requestedBy: string): Promise<void> {
    if (!snapshot.available && topology.nvmlWasAvailable) {
      // An NVML outage says nothing about which GPUs exist or which driver runs: keep what NVML last said.
      logger.warn({ reason: snapshot.reason }, 'NVML stopped answering: keeping the GPUs and driver version it last reported');
      return;
    }
    const identities = snapshot.available ? identitiesFromSnapshot(snapshot) : await backendIdentities();
    for (const identity of identities) gpuStore.seen(identity);
    topology.syncGpus(identities, requestedBy);
  }

  return {
    app,
    topology,
    poller,
    backend,
    db,
    async start() {
      for (const job of jobs.failInterrupted()) {
        logger.warn({ jobId: job.id, gpu: job.gpuUuid }, 'a probe job was interrupted by the previous shutdown; marked failed, the previous result stays served');
      }
      const snapshot = await dynamicSource.read();
      if (!snapshot.available) logger.info({ reason: snapshot.reason }, 'NVML unavailable: serving measured data without live partition state');
      topology.applySnapshot(snapshot);
      await enumerate(snapshot, 'boot');
      if (topology.listGpus().length === 0) logger.warn({ backend: selection.reason, nvml: snapshot.reason }, 'no GPUs found: serving an empty list');
      poller.on('change', (next, events) => {
        const migChanged = events.filter((e) => e.type === 'mig.changed').map((e) => e.gpuUuid);
        topology.applySnapshot(next, migChanged);
        if (events.some((e) => e.type !== 'mig.changed')) {
          void enumerate(next, 'nvml-change').catch((error: unknown) => logger.error({ err: error }, 'updating GPUs after an NVML change failed'));
        }
      });
      poller.start(snapshot);
    },
    whenIdle: () => scheduler?.whenIdle() ?? Promise.resolve(),
    async close() {
      poller.stop();
      await app.close();
      await scheduler?.close();
      await dynamicSource.close();
      db.close();
    },
  };
}
