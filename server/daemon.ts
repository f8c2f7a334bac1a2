import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import type { Discovery } from './discovery/contract.js';
import { DISCOVERY } from './discovery/index.js';
import { createDynamicSource } from './dynamic/source.js';
import { DynamicPoller } from './dynamic/poller.js';
import type { DynamicSnapshot, DynamicSource } from './dynamic/types.js';
import type { MeasurementBackend } from './gpu/backend.js';
import type { GpuIdentity } from './model/gpu.js';
import { selectConfiguredBackend, type BackendSelection } from './gpu/select-backend.js';
import { WalCheckpointer } from './store/wal-checkpointer.js';
import { ThreadResultWriter } from './store/result-writer.js';
import { workerNiceUnavailable } from './paths.js';
import type { GpuWatchOptions } from './jobs/gpu-watch.js';
import { ProbeScheduler } from './jobs/scheduler.js';
import { WorkerProbeRunner } from './jobs/worker-probe-runner.js';
import type { BackendRecipe } from './gpu/backend-recipe.js';
import { createAnalysisExecutor } from './results/analysis-executor.js';
import { ResultLifecycle } from './results/lifecycle.js';
import type { Db } from './store/database.js';
import { GpuStore } from './store/gpus.js';
import { JobStore } from './store/jobs.js';
import { StoreHealth } from './store/health.js';
import { ensureFolder, openStore, type OpenedStore } from './store/integrity.js';
import { lockDatabase, type HeldLock } from './store/lock.js';
import { gpuLocker } from './store/gpu-lock.js';
import { LockThread } from './store/lock-thread.js';
import { ResultStore } from './store/results.js';
import { Retention } from './store/retention.js';
import { readKernelModuleVersion, resolveDriverIdentity } from './topology/driver-identity.js';
import { ProbePolicy } from './topology/probe-policy.js';
import { TopologyService } from './topology/service.js';
import { startFleetFaces, type FleetFaces } from './fleet/index.js';
import { TOPOD_VERSION } from './version.js';
import { ERROR_CODES } from './errors.js';
import { withCarveoutPreference } from './gpu/carveout-profile.js';

export interface Daemon {
  app: FastifyInstance;
  topology: TopologyService;
  poller: DynamicPoller | null;
  backend: MeasurementBackend | null;
  /** Why nothing is measured, when there is no backend (select-backend's reason); null with one. */
  noBackendReason: string | null;
  db: Db;
  /** Boot: fail interrupted jobs, read NVML, enumerate GPUs, queue the probes that are missing. */
  start(): Promise<void>;
  /** What opening the store found (boot check, a damaged file moved aside and what was salvaged). */
  store: Pick<OpenedStore, 'boot' | 'movedAside'>;
  /** Resolves when no probe is queued or running. */
  whenIdle(): Promise<void>;
  close(): Promise<void>;
}

export interface DaemonOptions {
  logger?: Logger;
  /** Tests inject backends and dynamic sources; production builds them from the config. */
  backend?: MeasurementBackend | null;
  dynamicSource?: DynamicSource;
  /**
   * The backend choice, already under way: main.ts starts the native probe's
   * check (a process and a GPU context, ~0.4 s) while the rest of the daemon
   * is still being loaded. Default: made here, from the config.
   */
  backendSelection?: Promise<BackendSelection>;
  /** The kernel module's driver version when NVML is absent (tests inject it; default: /proc/driver/nvidia/version). */
  kernelDriverVersion?: () => string | null;
  /** Whether probes take the per-GPU file lock (default: only a backend that measures a real GPU, i.e. not simulated). */
  lockGpus?: boolean;
  /** What measures and analyses (default: server/discovery, analysed in worker threads). */
  discovery?: Discovery;
  /** Tests shorten the busy GPU's retry and watch intervals. */
  gpuWatch?: Partial<Pick<GpuWatchOptions, 'firstRetryMs' | 'maxRetryMs' | 'watchIntervalMs' | 'windowMs'>>;
}

/** A busy GPU is looked at again after 5 s, then twice as late each time, at least once a minute. */
const BUSY_FIRST_RETRY_MS = 5_000;
const BUSY_MAX_RETRY_MS = 60_000;
/** NVML is read this often during a probe (clocks, tenants); utilization is averaged over a second before one. */
const WATCH_INTERVAL_MS = 1_000;
const BUSY_WINDOW_MS = 1_000;

/** How often retention runs besides after each stored result. */
const RETENTION_INTERVAL_MS = 60 * 60_000;

/** One line on what opening the store found, for the log and /readyz. */
function bootSummary(opened: OpenedStore): string {
  const check =
    opened.boot.check === 'none'
      ? 'new or in-memory database'
      : `${opened.boot.check} ${opened.boot.ok ? 'ok' : 'failed'} in ${opened.boot.durationMs} ms`;
  if (!opened.movedAside) return check;
  const { file, salvage } = opened.movedAside;
  const kept = salvage
    ? `${salvage.results} results, ${salvage.rawSeries} raw series and ${salvage.gpus} GPUs recovered, ${salvage.skipped} unreadable rows skipped`
    : 'nothing could be recovered';
  return `${check}; the damaged file was moved to ${file}; fresh database, ${kept}`;
}

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
  // One daemon per database: locked before the file is even read (a StartupError naming the holder otherwise).
  if (config.dbPath !== ':memory:') ensureFolder(config.dbPath);
  const dbLock: HeldLock | null = await lockDatabase(config.dbPath);
  let opened: OpenedStore;
  try {
    opened = openStore(config.dbPath);
  } catch (error) {
    await dbLock?.release();
    throw error;
  }
  const db = opened.db;
  // A file's WAL is checkpointed in a worker after each stored result, not inside a commit on the event loop.
  const checkpointer = config.dbPath === ':memory:' ? null : new WalCheckpointer(db, config.dbPath, logger, config.workerNice);
  if (opened.movedAside) {
    const { reason, salvageError } = opened.movedAside;
    logger.error(
      {
        code: ERROR_CODES.STORE_DAMAGED,
        db: config.dbPath,
        reason,
        movedTo: opened.movedAside.file,
        salvage: opened.movedAside.salvage,
        salvageError,
      },
      `database ${config.dbPath} was damaged (${reason}): ${bootSummary(opened)}; GPUs without a recovered result are probed again`,
    );
  } else {
    logger.info({ db: config.dbPath, check: opened.boot }, `database ${config.dbPath}: ${bootSummary(opened)}`);
  }
  const results = new ResultStore(db, {
    onQuarantine: (row) =>
      logger.error(
        { resultId: row.resultId, gpu: row.gpuUuid, reason: row.reason },
        `stored result ${row.resultId} cannot be read (${row.reason}): kept in the database for inspection, no longer served; the GPU is probed again if it has no other result`,
      ),
  });
  const jobs = new JobStore(db);
  const gpuStore = new GpuStore(db);
  const retention = new Retention(db, { keepResults: config.retainResults ?? 10, jobMaxAgeMs: (config.retainJobsDays ?? 30) * 86_400_000 });
  const prune = (gpuUuid?: string): void => {
    const pruned = gpuUuid ? retention.pruneGpu(gpuUuid) : retention.pruneAll();
    if (pruned.results + pruned.jobs > 0) logger.info({ gpu: gpuUuid, ...pruned }, 'retention: pruned old results and jobs');
  };

  /** A failure further on must not leave the database open and locked (tests create daemons in one process). */
  const releaseStore = async (): Promise<void> => {
    await checkpointer?.close();
    db.close();
    await dbLock?.release();
  };
  let selection: BackendSelection;
  try {
    selection =
      options.backend !== undefined
        ? { backend: options.backend, reason: options.backend ? `${options.backend.kind} backend (injected)` : 'no backend (injected)' }
        : await (options.backendSelection ?? selectConfiguredBackend(config, logger));
  } catch (error) {
    await releaseStore();
    throw error;
  }
  const backend = selection.backend ? withCarveoutPreference(selection.backend, config.carveoutPercent) : null;
  if (backend) logger.info({ backend: backend.kind, probeVersion: backend.probeVersion }, `measurement backend: ${selection.reason}`);
  else logger.warn({ reason: selection.reason }, 'no measurement backend: GPUs are listed but not probed');

  const discovery = options.discovery ?? DISCOVERY;
  const store = new StoreHealth(db, config.dbPath, 1000, { boot: bootSummary(opened) });
  const lockDir = config.lockDir ?? null;
  const lockGpus = (options.lockGpus ?? (backend !== null && !backend.simulated)) && lockDir !== null;
  // Each probe's lock helper is spawned from a thread of its own: a fork on the event loop held every answer (issue 17.5).
  const lockThread = lockGpus ? new LockThread() : null;
  lockThread?.prestart(); // before the port is bound, not during the first probe
  const lockGpu = lockThread ? gpuLocker(lockDir as string, lockThread) : null;
  const dynamicSource = options.dynamicSource ?? createDynamicSource({ libraryPath: config.nvmlLib, addonPath: config.nvmlAddon, logger });
  const watch: GpuWatchOptions = {
    readActivity: (uuid, read) => dynamicSource.readActivity(uuid, read),
    when: config.probeWhen,
    maxWaitMs: config.probeMaxWaitMs,
    firstRetryMs: BUSY_FIRST_RETRY_MS,
    maxRetryMs: BUSY_MAX_RETRY_MS,
    watchIntervalMs: WATCH_INTERVAL_MS,
    windowMs: BUSY_WINDOW_MS,
    ownPids: () => [process.pid],
    ...options.gpuWatch,
  };
  // Without a backend nothing is measured, and nothing re-analysed: no worker threads are started.
  const niceUnavailable = config.workerNice > 0 ? workerNiceUnavailable() : null;
  if (niceUnavailable) logger.warn({ reason: niceUnavailable }, "TOPOD_WORKER_NICE: the worker threads run at the event loop's priority");
  const analysis = backend ? createAnalysisExecutor(discovery, { nice: config.workerNice }) : null;
  // A file's results are written by a thread of their own, so a probe's megabyte of series is never inserted on the event loop.
  const writer = analysis && config.dbPath !== ':memory:' ? new ThreadResultWriter(config.dbPath) : null;
  const lifecycle = analysis
    ? new ResultLifecycle({
        db,
        results,
        jobs,
        analysis,
        ...(writer ? { writer } : {}),
        analysisVersion: discovery.version,
        logger,
        storeHealth: store,
        afterStore: (gpuUuid) => {
          prune(gpuUuid);
          checkpointer?.request();
        },
      })
    : null;
  // The daemon's own backend (not one a test injects) measures in probe worker threads, rebuilt there from its recipe.
  const recipe: BackendRecipe | null =
    options.backend !== undefined || !backend || options.discovery
      ? null
      : backend.kind === 'sim'
        ? { kind: 'sim', models: config.simModels, carveoutPercent: config.carveoutPercent }
        : {
            kind: 'native',
            probePath: config.probePath,
            deadlineMs: config.probeDeadlineMs,
            env: { ...config.probeEnv },
            carveoutPercent: config.carveoutPercent,
          };
  const runner = recipe
    ? new WorkerProbeRunner({
        recipe,
        concurrency: config.probeConcurrency,
        logLevel: config.logLevel,
        nice: config.workerNice,
      })
    : null;
  const scheduler =
    backend && lifecycle
      ? new ProbeScheduler({
          jobs,
          backend,
          discover: discovery.discover,
          ...(runner ? { runner } : {}),
          lifecycle,
          concurrency: config.probeConcurrency,
          logger,
          storeHealth: store,
          watch,
          ...(lockGpu ? { lockGpu } : {}),
        })
      : null;
  const policy = new ProbePolicy({
    results,
    probeVersion: backend?.probeVersion ?? null,
    isOutdated: lifecycle ? (result) => lifecycle.isOutdated(result) : null,
  });
  const topology = new TopologyService({
    jobs,
    scheduler,
    policy,
    lifecycle,
    store,
    noBackendReason: backend ? null : selection.reason,
    logger,
  });
  const kernelDriverVersion = options.kernelDriverVersion ?? (() => readKernelModuleVersion());
  const poller = new DynamicPoller({ source: dynamicSource, pollMs: config.pollMs, logger });
  let app: FastifyInstance;
  try {
    app = await buildApp({ config, topology, logger, version: TOPOD_VERSION, nvmlPoller: poller });
  } catch (error) {
    await runner?.close();
    await analysis?.close();
    await writer?.close();
    await releaseStore();
    throw error;
  }

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
    if (!snapshot.available && backend?.simulated) {
      // The simulator measures NVML's GPUs when NVML answers, and invents its own otherwise. NVML failing at
      // boot on a host where it answered before is an outage too: list what it reported then, not phantoms
      // that would be probed, then swapped for the real GPUs (gpu.removed/added) when NVML is back.
      const remembered = gpuStore.nvmlKnown();
      if (remembered.length > 0) {
        logger.warn(
          { reason: snapshot.reason, gpus: remembered.map((g) => g.uuid) },
          "NVML is not answering: listing the GPUs it reported last time, not the simulator's own",
        );
        topology.syncGpus(remembered, requestedBy);
        return;
      }
    }
    const identities = snapshot.available ? identitiesFromSnapshot(snapshot) : await backendIdentities();
    for (const identity of identities) gpuStore.seen(identity);
    topology.syncGpus(identities, requestedBy);
  }

  let retentionTimer: NodeJS.Timeout | null = null;
  let fleet: FleetFaces | null = null;

  return {
    app,
    topology,
    poller,
    backend,
    noBackendReason: backend ? null : selection.reason,
    db,
    store: { boot: opened.boot, movedAside: opened.movedAside },
    async start() {
      try {
        prune();
      } catch (error) {
        store.recordWriteFailure(error);
        logger.warn({ err: error }, 'retention at boot failed; old rows are kept');
      }
      retentionTimer = setInterval(() => {
        try {
          prune();
        } catch (error) {
          store.recordWriteFailure(error);
          logger.warn({ err: error }, 'retention failed; old rows are kept');
        }
      }, RETENTION_INTERVAL_MS);
      retentionTimer.unref();
      for (const job of jobs.failInterrupted()) {
        logger.warn(
          { jobId: job.id, gpu: job.gpuUuid },
          'a probe job was interrupted by the previous shutdown; marked failed, the previous result stays served',
        );
      }
      // Boot runs while the port is bound: each step in a turn of its own, so the first answers wait for one step at most.
      await nextTurn();
      const snapshot = await dynamicSource.read();
      if (!snapshot.available)
        logger.info({ reason: snapshot.reason }, 'NVML unavailable: serving measured data without live partition state');
      topology.applySnapshot(snapshot);
      await nextTurn();
      await enumerate(snapshot, 'boot');
      await nextTurn();
      fleet = startFleetFaces(config, topology, logger);
      if (topology.listGpus().length === 0)
        logger.warn({ backend: selection.reason, nvml: snapshot.reason }, 'no GPUs found: serving an empty list');
      poller.on('change', (next, events) => {
        const migChanged = events.filter((e) => e.type === 'mig.changed').map((e) => e.gpuUuid);
        topology.applySnapshot(next, migChanged);
        if (events.some((e) => e.type !== 'mig.changed')) {
          void enumerate(next, 'nvml-change').catch((error: unknown) =>
            logger.error({ err: error }, 'updating GPUs after an NVML change failed'),
          );
        }
      });
      poller.start(snapshot);
    },
    whenIdle: async () => {
      await topology.whenReanalysed();
      await scheduler?.whenIdle();
    },
    async close() {
      if (retentionTimer) clearInterval(retentionTimer);
      fleet?.close();
      poller.stop();
      await app.close();
      await scheduler?.close();
      await lockThread?.close();
      await topology.whenReanalysed();
      await analysis?.close();
      await writer?.close();
      await dynamicSource.close();
      await checkpointer?.close();
      db.close();
      await dbLock?.release();
    },
  };
}
