/**
 * `npm run bench:serve-while-probing` — issue 17.5: the API never waits on a
 * probe. Starts the real daemon, built (dist/server/main.js, as `npm start`
 * runs it), on a fresh database and a free port. From its start until every
 * GPU's first probe has succeeded, one client asks for
 * `GET /v1/gpus/{i}/topology` (each GPU in turn) and another for
 * `GET /healthz`, each every --interval-ms on its own keep-alive connection,
 * and records each answer's latency (request sent to last byte). A 503
 * "pending" answer is an answer: it is what a scheduler gets during a first
 * probe. Each client waits for its answer before the next request, so a
 * stall shows as one long answer: the max is the figure that catches it.
 * The first answer of each client (connection set-up) is left out.
 *
 * Then, as the baseline, the same clients for --idle-s more with nothing
 * left to probe.
 *
 * Prints the machine, the GPUs and probe concurrency, the probing span, and
 * per endpoint answers, p50, p99, max and the slowest answers' times, held
 * against the goal (p99 ≤ 10 ms, max ≤ 50 ms); also the daemon's own
 * event-loop delay (read inside it through an --import preload, and from
 * /metrics when it has such a series) and this client's, to tell a slow
 * daemon from a busy machine. Exits 1 when a goal is missed or a probe fails.
 *
 *   --backend sim|native   sim (default): simulated H100s, no NVML;
 *                          native: the machine's GPUs, probe and NVML
 *   --gpus N               simulated GPUs (default 8)
 *   --sim-model ID         their model (default h100-sxm5-80gb)
 *   --concurrency N        TOPOD_PROBE_CONCURRENCY (default 8)
 *   --worker-nice N        TOPOD_WORKER_NICE (default: the daemon's own, 10)
 *   --probe PATH           topod-probe executable (native; default the built one)
 *   --interval-ms N        each client's request period (default 10)
 *   --timeout-s N          give up when the probes take longer (default 900)
 *   --idle-s N             then the baseline: the same clients for N s more,
 *                          nothing left to probe (default 3)
 *   --json FILE            write the figures as JSON
 *
 * Build first (`tsc -p tsconfig.build.json`), then `node dist/bench/serve-while-probing.js`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { GpuSummary } from '../server/model/gpu.js';
import { DAEMON_NODE_FLAGS } from '../server/node-flags.js';
import { projectRoot } from '../server/paths.js';
import { freePort } from './free-port.js';

const GOAL_P99_MS = 10;
const GOAL_MAX_MS = 50;
const WATCH_MS = 250;
const REQUEST_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;
const LOOP_WINDOW_MS = 250;
const SLOWEST_SHOWN = 3;
/** Series of /metrics whose name says event loop (prom-client's nodejs_eventloop_lag_* or the daemon's own). */
const EVENT_LOOP_SERIES = /^([a-z_:]*event_?loop[a-z_:]*)(\{[^}]*\})?\s+(\S+)/i;

interface Options {
  backend: 'sim' | 'native';
  gpus: number;
  simModel: string;
  concurrency: number;
  /** TOPOD_WORKER_NICE, or null for the daemon's default. */
  workerNice: number | null;
  probePath: string | null;
  intervalMs: number;
  timeoutS: number;
  idleS: number;
  jsonPath: string | null;
}

function positiveInteger(raw: string | undefined, fallback: number, flag: string): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1) throw new Error(`${flag} must be a positive integer, got "${raw}"`);
  return value;
}

function niceIncrement(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) > 19) throw new Error(`--worker-nice must be an integer from 0 to 19, got "${raw}"`);
  return Number(raw);
}

function readOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      backend: { type: 'string', default: 'sim' },
      gpus: { type: 'string' },
      'sim-model': { type: 'string', default: 'h100-sxm5-80gb' },
      concurrency: { type: 'string' },
      'worker-nice': { type: 'string' },
      probe: { type: 'string' },
      'interval-ms': { type: 'string' },
      'timeout-s': { type: 'string' },
      'idle-s': { type: 'string' },
      json: { type: 'string' },
    },
  });
  if (values.backend !== 'sim' && values.backend !== 'native') throw new Error(`--backend must be sim or native, got "${values.backend}"`);
  if (values.backend === 'native' && values.gpus !== undefined)
    throw new Error('--gpus is for the simulator: the native backend probes every GPU it sees');
  return {
    backend: values.backend,
    gpus: positiveInteger(values.gpus, 8, '--gpus'),
    simModel: values['sim-model'],
    concurrency: positiveInteger(values.concurrency, 8, '--concurrency'),
    workerNice: values['worker-nice'] === undefined ? null : niceIncrement(values['worker-nice']),
    probePath: values.probe ?? null,
    intervalMs: positiveInteger(values['interval-ms'], 10, '--interval-ms'),
    timeoutS: positiveInteger(values['timeout-s'], 900, '--timeout-s'),
    idleS: positiveInteger(values['idle-s'], 3, '--idle-s'),
    jsonPath: values.json ?? null,
  };
}

// ---------------------------------------------------------------- the daemon

/**
 * Loaded into the daemon with --import (the daemon's code is unchanged): its
 * event-loop delay, one JSON line per window, so a slow answer can be told
 * apart from a busy machine. The delay includes time the OS did not run the
 * thread, as any lateness a client sees does.
 */
const EVENT_LOOP_MONITOR = `
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { appendFileSync } from 'node:fs';
const file = process.env.BENCH_EVENT_LOOP_FILE;
if (file) {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  setInterval(() => {
    if (delay.count > 0) appendFileSync(file, JSON.stringify({ atMs: Date.now(), maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6 }) + '\\n');
    delay.reset();
  }, ${LOOP_WINDOW_MS}).unref();
}`;

interface LoopWindow {
  atMs: number;
  maxMs: number;
  p99Ms: number;
}

/** The daemon's environment: this one's (PATH, CUDA_VISIBLE_DEVICES…) without any TOPOD_ setting, plus the bench's. */
function daemonEnv(options: Options, dir: string, port: number): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(([name]) => !name.startsWith('TOPOD_'));
  const sim =
    options.backend === 'sim'
      ? {
          TOPOD_SIM_MODEL: Array.from({ length: options.gpus }, () => options.simModel).join(','),
          TOPOD_NVML_LIB: '/nonexistent',
          // Simulated UUIDs are the same in every run: a lock folder of its own keeps another bench's daemon from waiting on ours.
          TOPOD_LOCK_DIR: path.join(dir, 'locks'),
        }
      : {};
  return {
    ...Object.fromEntries(inherited),
    ...sim,
    ...(options.probePath ? { TOPOD_PROBE_PATH: path.resolve(options.probePath) } : {}),
    TOPOD_BACKEND: options.backend,
    TOPOD_DB: path.join(dir, 'topod.sqlite'),
    TOPOD_HOST: '127.0.0.1',
    TOPOD_PORT: String(port),
    TOPOD_PROBE_CONCURRENCY: String(options.concurrency),
    ...(options.workerNice === null ? {} : { TOPOD_WORKER_NICE: String(options.workerNice) }),
    TOPOD_LOG_LEVEL: 'warn',
    BENCH_EVENT_LOOP_FILE: path.join(dir, 'event-loop.jsonl'),
  };
}

/** Runs the daemon until stop(); the temp folder (database, log) goes with it, on every way out. */
class DaemonUnderTest {
  private readonly child: ChildProcess;
  private exited = false;
  readonly logPath: string;
  readonly startedAt = performance.now();

  constructor(
    readonly dir: string,
    env: NodeJS.ProcessEnv,
  ) {
    const main = path.join(projectRoot(), 'dist/server/main.js');
    if (!existsSync(main)) throw new Error(`${main} is missing: build first (npx tsc -p tsconfig.build.json)`);
    this.logPath = path.join(dir, 'daemon.log');
    const log = openSync(this.logPath, 'a');
    const monitor = `--import=data:text/javascript,${encodeURIComponent(EVENT_LOOP_MONITOR)}`;
    // BENCH_DAEMON_NODE_ARGS: extra node flags for the daemon alone (e.g. --cpu-prof, which NODE_OPTIONS refuses).
    const extra = (process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean);
    this.child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, ...extra, monitor, main], { env, stdio: ['ignore', log, log] });
    closeSync(log);
    this.child.once('exit', () => (this.exited = true));
  }

  get hasExited(): boolean {
    return this.exited;
  }

  logTail(lines = 20): string {
    try {
      return readFileSync(this.logPath, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** The daemon's event-loop windows that ended between fromMs and toMs (Date.now() times). */
  loopWindows(fromMs: number, toMs: number): LoopWindow[] {
    const file = path.join(this.dir, 'event-loop.jsonl');
    if (!existsSync(file)) return [];
    const windows = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LoopWindow);
    return windows.filter((window) => window.atMs > fromMs && window.atMs - LOOP_WINDOW_MS < toMs);
  }

  /** SIGTERM, then SIGKILL after the daemon's own grace period; then the folder goes. */
  async stop(): Promise<void> {
    if (!this.exited) {
      const exit = once(this.child, 'exit');
      this.child.kill('SIGTERM');
      const killer = setTimeout(() => this.child.kill('SIGKILL'), STOP_GRACE_MS);
      await exit;
      clearTimeout(killer);
    }
    this.removeFolder();
  }

  /** For process 'exit' (synchronous): kill without waiting. */
  stopNow(): void {
    if (!this.exited) this.child.kill('SIGKILL');
    this.removeFolder();
  }

  private removeFolder(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- the clients

interface Answer {
  status: number;
  body: string;
  latencyMs: number;
}

function get(agent: http.Agent, port: number, urlPath: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sentAt = performance.now();
    const request = http.get({ host: '127.0.0.1', port, path: urlPath, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), latencyMs: performance.now() - sentAt }),
      );
      response.on('error', reject);
    });
    request.setTimeout(REQUEST_TIMEOUT_MS, () => request.destroy(new Error(`GET ${urlPath}: no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    request.on('error', reject);
  });
}

interface EndpointRecord {
  latenciesMs: number[];
  /** When each answer came, in seconds since startedAt. */
  atS: number[];
  startedAt: number;
  statuses: Record<string, number>;
  errors: number;
}

const secondsSince = (startMs: number): number => (performance.now() - startMs) / 1000;

const newRecord = (startedAt: number): EndpointRecord => ({ latenciesMs: [], atS: [], startedAt, statuses: {}, errors: 0 });

/** Asks for nextPath() every intervalMs (a fixed schedule; a late answer moves it on) into target()'s record, until it gives none. */
async function poll(port: number, nextPath: () => string, intervalMs: number, target: () => EndpointRecord | null): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let dueAt = performance.now();
  let warm = false;
  try {
    for (let record = target(); record !== null; record = target()) {
      try {
        const answer = await get(agent, port, nextPath());
        if (warm) {
          record.latenciesMs.push(answer.latencyMs);
          record.atS.push(secondsSince(record.startedAt));
          record.statuses[answer.status] = (record.statuses[answer.status] ?? 0) + 1;
        }
        warm = true;
      } catch {
        if (warm) record.errors += 1;
      }
      dueAt += intervalMs;
      const waitMs = dueAt - performance.now();
      if (waitMs > 0) await sleep(waitMs);
      else dueAt = performance.now();
    }
  } finally {
    agent.destroy();
  }
}

// ---------------------------------------------------------------- the watch

interface ProbeProgress {
  gpus: GpuSummary[];
  done: boolean;
  failed: string[];
}

function progressOf(gpus: GpuSummary[], expectedGpus: number | null): ProbeProgress {
  const failed = gpus.filter((gpu) => gpu.probe.status === 'failed').map((gpu) => `GPU ${gpu.index}`);
  const enough = expectedGpus === null ? gpus.length > 0 : gpus.length >= expectedGpus;
  return { gpus, failed, done: failed.length > 0 || (enough && gpus.every((gpu) => gpu.probe.status === 'probed')) };
}

/** The event-loop series /metrics has, by name and labels: the highest value seen of each. */
function eventLoopSeries(metrics: string): Map<string, number> {
  const series = new Map<string, number>();
  for (const line of metrics.split('\n')) {
    const match = EVENT_LOOP_SERIES.exec(line);
    if (!match || line.startsWith('#')) continue;
    const value = Number(match[3]);
    if (Number.isFinite(value)) series.set(`${match[1]}${match[2] ?? ''}`, value);
  }
  return series;
}

interface JobTimes {
  startedAt: string | null;
  finishedAt: string | null;
}

/** From the first job's start to the last one's end, as the daemon records them. */
function jobSpanS(jobs: JobTimes[]): number | null {
  const starts = jobs.flatMap((job) => (job.startedAt ? [Date.parse(job.startedAt)] : []));
  const ends = jobs.flatMap((job) => (job.finishedAt ? [Date.parse(job.finishedAt)] : []));
  if (starts.length === 0 || ends.length === 0) return null;
  return (Math.max(...ends) - Math.min(...starts)) / 1000;
}

// ---------------------------------------------------------------- figures

/** Nearest rank: the smallest value with at least q of the values at or below it. */
function quantile(sorted: number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? null;
}

interface EndpointFigures {
  answers: number;
  statuses: Record<string, number>;
  errors: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  slowest: Array<{ latencyMs: number; atS: number }>;
  pass: boolean;
}

const round = (value: number | null): number | null => (value === null || !Number.isFinite(value) ? null : Math.round(value * 100) / 100);

function figuresOf(record: EndpointRecord): EndpointFigures {
  const sorted = [...record.latenciesMs].sort((a, b) => a - b);
  const p99Ms = quantile(sorted, 0.99);
  const maxMs = sorted.at(-1) ?? null;
  const pass = record.errors === 0 && p99Ms !== null && maxMs !== null && p99Ms <= GOAL_P99_MS && maxMs <= GOAL_MAX_MS;
  const slowest = record.latenciesMs
    .map((latencyMs, i) => ({ latencyMs, atS: record.atS[i] ?? 0 }))
    .sort((a, b) => b.latencyMs - a.latencyMs)
    .slice(0, SLOWEST_SHOWN);
  return {
    answers: sorted.length,
    statuses: record.statuses,
    errors: record.errors,
    p50Ms: round(quantile(sorted, 0.5)),
    p99Ms: round(p99Ms),
    maxMs: round(maxMs),
    slowest,
    pass,
  };
}

const ms = (value: number | null): string => (value === null ? '–' : value.toFixed(2));

// ---------------------------------------------------------------- the run

/** Seconds from the daemon's start to its first answer of /healthz. */
async function firstAnswer(daemon: DaemonUnderTest, agent: http.Agent, port: number, deadline: number): Promise<number> {
  for (;;) {
    if (daemon.hasExited) throw new Error(`the daemon exited before it answered:\n${daemon.logTail()}`);
    if (performance.now() > deadline) throw new Error('the daemon never answered /healthz');
    try {
      await get(agent, port, '/healthz');
      return (performance.now() - daemon.startedAt) / 1000;
    } catch {
      await sleep(20);
    }
  }
}

interface WatchOutcome {
  progress: ProbeProgress;
  /** Highest value of each event-loop series /metrics had; null when it has none. */
  metricsEventLoop: Map<string, number> | null;
}

/** Reads the GPU list (and /metrics' event-loop series, if any) until every GPU is probed or one failed. */
async function watchProbes(
  daemon: DaemonUnderTest,
  agent: http.Agent,
  port: number,
  expectedGpus: number | null,
  deadline: number,
  onGpus: (count: number) => void,
): Promise<WatchOutcome> {
  const metrics = await get(agent, port, '/metrics');
  const metricsEventLoop = metrics.status === 200 && eventLoopSeries(metrics.body).size > 0 ? new Map<string, number>() : null;
  let progress: ProbeProgress = { gpus: [], done: false, failed: [] };
  let lastLine = '';
  for (;;) {
    if (daemon.hasExited) throw new Error(`the daemon exited while probing:\n${daemon.logTail()}`);
    if (performance.now() > deadline)
      throw new Error(
        `the probes did not finish in time (--timeout-s); last seen: ${lastLine}; the daemon's log ends:\n${daemon.logTail()}`,
      );
    const list = await get(agent, port, '/v1/gpus');
    if (list.status === 200) {
      progress = progressOf((JSON.parse(list.body) as { gpus: GpuSummary[] }).gpus, expectedGpus);
      onGpus(progress.gpus.length);
    }
    if (metricsEventLoop) {
      const sample = await get(agent, port, '/metrics');
      for (const [name, value] of eventLoopSeries(sample.body))
        metricsEventLoop.set(name, Math.max(value, metricsEventLoop.get(name) ?? -Infinity));
    }
    const counts = new Map<string, number>();
    for (const gpu of progress.gpus) counts.set(gpu.probe.status, (counts.get(gpu.probe.status) ?? 0) + 1);
    const line = [...counts].map(([status, count]) => `${count} ${status}`).join(', ') || 'no GPU listed yet';
    if (line !== lastLine) console.log(`${secondsSince(daemon.startedAt).toFixed(1).padStart(6)} s  ${line}`);
    lastLine = line;
    if (progress.done) return { progress, metricsEventLoop };
    await sleep(WATCH_MS);
  }
}

async function run(options: Options, daemon: DaemonUnderTest, port: number): Promise<boolean> {
  const expectedGpus = options.backend === 'sim' ? options.gpus : null;
  const watchAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const deadline = daemon.startedAt + options.timeoutS * 1000;

  // The port answers once the daemon listens; it boots (enumerates GPUs, queues probes) right after.
  const firstAnswerS = await firstAnswer(daemon, watchAgent, port, deadline);
  const fromWallMs = Date.now();
  console.log(`${firstAnswerS.toFixed(1).padStart(6)} s  daemon answers`);

  const clientLoop = monitorEventLoopDelay({ resolution: 5 });
  clientLoop.enable();
  let gpuCount = expectedGpus ?? 1;
  let phase: 'probing' | 'idle' | 'stopped' = 'probing';
  const records = {
    probing: { topology: newRecord(daemon.startedAt), healthz: newRecord(daemon.startedAt) },
    idle: { topology: newRecord(daemon.startedAt), healthz: newRecord(daemon.startedAt) },
  };
  let turn = 0;
  const clients = [
    poll(
      port,
      () => `/v1/gpus/${turn++ % gpuCount}/topology`,
      options.intervalMs,
      () => (phase === 'stopped' ? null : records[phase].topology),
    ),
    poll(
      port,
      () => '/healthz',
      options.intervalMs,
      () => (phase === 'stopped' ? null : records[phase].healthz),
    ),
  ];
  let watched: WatchOutcome;
  let probedWallMs = Date.now();
  try {
    watched = await watchProbes(daemon, watchAgent, port, expectedGpus, deadline, (count) => (gpuCount = Math.max(1, count)));
    probedWallMs = Date.now();
    // The baseline: the same clients against the same daemon with nothing left to probe.
    phase = 'idle';
    await sleep(options.idleS * 1000);
  } finally {
    phase = 'stopped';
    await Promise.all(clients);
    clientLoop.disable();
  }
  const probingSpanS = (probedWallMs - fromWallMs) / 1000 + firstAnswerS;
  const loopWindows = daemon.loopWindows(fromWallMs, probedWallMs);
  const idleLoopWindows = daemon.loopWindows(probedWallMs + LOOP_WINDOW_MS, Date.now());
  const jobs = await get(watchAgent, port, '/v1/jobs?limit=500');
  watchAgent.destroy();

  const { progress, metricsEventLoop } = watched;
  const cpus = os.cpus();
  const endpoints = { topology: figuresOf(records.probing.topology), healthz: figuresOf(records.probing.healthz) };
  const idleEndpoints = { topology: figuresOf(records.idle.topology), healthz: figuresOf(records.idle.healthz) };
  const report = {
    date: new Date().toISOString(),
    machine: {
      cpu: cpus[0]?.model ?? 'unknown',
      cores: cpus.length,
      loadAverage1m: os.loadavg()[0] ?? 0,
      memoryBytes: os.totalmem(),
      node: process.version,
      platform: `${os.type()} ${os.release()}`,
    },
    backend: options.backend,
    gpus: progress.gpus.length,
    gpuNames: [...new Set(progress.gpus.map((gpu) => `${gpu.name} (driver ${gpu.driverVersion})`))],
    probeConcurrency: options.concurrency,
    workerNice: options.workerNice,
    intervalMs: options.intervalMs,
    firstAnswerS,
    probingSpanS,
    jobsSpanS: jobs.status === 200 ? jobSpanS((JSON.parse(jobs.body) as { jobs: JobTimes[] }).jobs) : null,
    failedProbes: progress.failed,
    endpoints,
    idleS: options.idleS,
    idleEndpoints,
    daemonEventLoop: { probing: loopFigures(loopWindows), idle: loopFigures(idleLoopWindows) },
    metricsEventLoop: metricsEventLoop ? Object.fromEntries(metricsEventLoop) : null,
    clientEventLoop: { p99Ms: round(clientLoop.percentile(99) / 1e6), maxMs: round(clientLoop.max / 1e6) },
    goal: { p99Ms: GOAL_P99_MS, maxMs: GOAL_MAX_MS },
  };
  printReport(report);
  if (progress.failed.length > 0) console.log(`probe failed on ${progress.failed.join(', ')}; the daemon's log ends:\n${daemon.logTail()}`);
  if (options.jsonPath) writeFileSync(options.jsonPath, `${JSON.stringify(report, null, 2)}\n`);
  return progress.failed.length === 0 && endpoints.topology.pass && endpoints.healthz.pass;
}

interface LoopFigures {
  windows: number;
  maxMs: number | null;
  highestWindowP99Ms: number | null;
}

function loopFigures(windows: LoopWindow[]): LoopFigures {
  if (windows.length === 0) return { windows: 0, maxMs: null, highestWindowP99Ms: null };
  return {
    windows: windows.length,
    maxMs: round(Math.max(...windows.map((w) => w.maxMs))),
    highestWindowP99Ms: round(Math.max(...windows.map((w) => w.p99Ms))),
  };
}

interface Report {
  machine: { cpu: string; cores: number; loadAverage1m: number; platform: string };
  backend: string;
  gpus: number;
  gpuNames: string[];
  probeConcurrency: number;
  workerNice: number | null;
  intervalMs: number;
  firstAnswerS: number;
  probingSpanS: number;
  jobsSpanS: number | null;
  endpoints: Record<string, EndpointFigures>;
  idleS: number;
  idleEndpoints: Record<string, EndpointFigures>;
  daemonEventLoop: { probing: LoopFigures; idle: LoopFigures };
  metricsEventLoop: Record<string, number> | null;
  clientEventLoop: { p99Ms: number | null; maxMs: number | null };
}

function printReport(report: Report): void {
  const { machine } = report;
  console.log(
    `\nmachine: ${machine.cpu}, ${machine.cores} cores, load ${machine.loadAverage1m.toFixed(2)} (1 min), Node ${process.version}, ${machine.platform}`,
  );
  console.log(
    `GPUs: ${report.gpus} (${report.backend}${report.gpuNames.length ? `: ${report.gpuNames.join('; ')}` : ''}), probe concurrency ${report.probeConcurrency}, worker nice ${report.workerNice ?? 'default'}, each client every ${report.intervalMs} ms`,
  );
  const jobs = report.jobsSpanS === null ? '–' : `${report.jobsSpanS.toFixed(1)} s`;
  console.log(
    `probing: daemon start to every GPU probed ${report.probingSpanS.toFixed(1)} s (first answer at ${report.firstAnswerS.toFixed(2)} s; the jobs' own span ${jobs})`,
  );
  console.log(
    `\n| endpoint | answers (status: count) | errors | p50 ms | p99 ms | max ms | slowest at (s since start) | p99 ≤ ${GOAL_P99_MS}, max ≤ ${GOAL_MAX_MS} |`,
  );
  console.log('|---|---|---:|---:|---:|---:|---|---|');
  const row = (name: string, figures: EndpointFigures, goal: string) => {
    const statuses = Object.entries(figures.statuses)
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ');
    const slowest = figures.slowest.map((answer) => `${ms(answer.latencyMs)} ms @ ${answer.atS.toFixed(1)}`).join(', ');
    console.log(
      `| ${name} | ${figures.answers} (${statuses}) | ${figures.errors} | ${ms(figures.p50Ms)} | ${ms(figures.p99Ms)} | ${ms(figures.maxMs)} | ${slowest} | ${goal} |`,
    );
  };
  for (const [name, figures] of Object.entries(report.endpoints)) row(`${name}, probing`, figures, figures.pass ? 'PASS' : 'FAIL');
  for (const [name, figures] of Object.entries(report.idleEndpoints))
    row(`${name}, idle (baseline, ${report.idleS} s after)`, figures, '–');
  const loop = (figures: LoopFigures) =>
    `max ${ms(figures.maxMs)} ms, highest window p99 ${ms(figures.highestWindowP99Ms)} ms (${figures.windows} windows)`;
  console.log(
    `\nthe daemon's event-loop delay, measured inside it per ${LOOP_WINDOW_MS} ms window: probing ${loop(report.daemonEventLoop.probing)}; idle ${loop(report.daemonEventLoop.idle)}`,
  );
  if (report.metricsEventLoop) {
    for (const [name, value] of Object.entries(report.metricsEventLoop)) console.log(`  /metrics ${name}: highest ${value}`);
  } else {
    console.log('  (/metrics exposes no event-loop series)');
  }
  console.log(
    `this client's own event-loop delay: p99 ${ms(report.clientEventLoop.p99Ms)} ms, max ${ms(report.clientEventLoop.maxMs)} ms (high: the machine, not the daemon, delayed the answers)`,
  );
}

async function main(): Promise<void> {
  const options = readOptions(process.argv.slice(2));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'topod-serve-while-probing-'));
  let daemon: DaemonUnderTest | null = null;
  // Every way out kills the daemon and removes the folder: a normal end, an error, Ctrl-C, SIGTERM.
  process.on('exit', () => (daemon ? daemon.stopNow() : rmSync(dir, { recursive: true, force: true })));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping the daemon`);
      void (daemon?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
    });
  }
  const port = await freePort();
  daemon = new DaemonUnderTest(dir, daemonEnv(options, dir, port));
  try {
    process.exitCode = (await run(options, daemon, port)) ? 0 : 1;
  } finally {
    await daemon.stop();
  }
}

main().catch((error: unknown) => {
  console.error(`bench:serve-while-probing: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
