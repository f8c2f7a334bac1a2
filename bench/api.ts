/**
 * `npm run bench:api` — GET /v1/gpus/0/topology on the real daemon (sim
 * backend, one probed GPU) against a bare fastify route sending the same
 * bytes; a third case, our app over an in-memory topology, splits the gap
 * into what the HTTP layer costs and what the daemon around it costs. Each
 * server is a fresh child process; autocannon runs in this one. Prints req/s, p99 latency, RSS after each case, the machine, and last the
 * ratio ours/bare. bench/poll.ts reuses the harness exported here.
 *
 * Environment: BENCH_DURATION_S (default 10), BENCH_CONNECTIONS (default 100),
 * BENCH_SLICE_S (default 2). Children run under the parent's loader: tsx adds
 * ~30 MB RSS, so for production memory figures build and run
 * `node dist/bench/api.js`.
 */
import type { PreparedDocument } from '../server/model/topology-api.js';
import { DAEMON_NODE_FLAGS } from '../server/node-flags.js';
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import os from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const TOPOLOGY_PATH = '/v1/gpus/0/topology';
const WARMUP_S = 2;

/** daemon: the real thing; app: our HTTP layer over an in-memory topology (isolates the daemon's own cost); bare: plain fastify. */
export type ServerKind = 'daemon' | 'app' | 'bare';

/** What a server child reports once listening. */
interface ReadyMessage {
  type: 'ready';
  url: string;
}

interface StatsMessage {
  type: 'stats';
  rssBytes: number;
  /** Daemon only: the NVML refresh cost (see readNvmlRefreshCost). */
  nvmlRefresh: NvmlRefreshCost | null;
}

export interface NvmlRefreshCost {
  reads: number;
  lastReadDurationMs: number | null;
}

export interface ServedDocument {
  body: string;
  etag: string;
  conditional: boolean;
}

type ParentMessage = ({ type: 'serve-document' } & ServedDocument) | { type: 'stats' } | { type: 'stop' };

// ---------------------------------------------------------------- child side

function send(message: ReadyMessage | StatsMessage): void {
  process.send?.(message);
}

/**
 * Hook for the poll benchmark: what one NVML refresh costs in the daemon
 * (DynamicPoller.getStats). Returns null when the daemon runs without a poller.
 */
function readNvmlRefreshCost(daemon: {
  poller: { getStats(): { reads: number; lastReadDurationMs: number | null } } | null;
}): NvmlRefreshCost | null {
  if (daemon.poller === null) return null;
  const { reads, lastReadDurationMs } = daemon.poller.getStats();
  return { reads, lastReadDurationMs };
}

async function serveDaemon(): Promise<void> {
  const { loadConfig } = await import('../server/config.js');
  const { createDaemon } = await import('../server/daemon.js');
  const config = loadConfig({
    TOPOD_BACKEND: 'sim',
    TOPOD_DB: ':memory:',
    TOPOD_LOG_LEVEL: 'silent',
    ...(process.env.TOPOD_POLL_MS ? { TOPOD_POLL_MS: process.env.TOPOD_POLL_MS } : {}),
    ...(process.env.TOPOD_NVML_LIB ? { TOPOD_NVML_LIB: process.env.TOPOD_NVML_LIB } : {}),
  });
  const daemon = await createDaemon(config);
  await daemon.start();
  await daemon.whenIdle();
  const url = await daemon.app.listen({ host: '127.0.0.1', port: 0 });
  answerParent(
    url,
    () => daemon.close(),
    () => readNvmlRefreshCost(daemon),
  );
}

/** Reports readiness, then answers the parent's stats and stop requests. */
function answerParent(url: string, close: () => Promise<void>, nvmlRefresh: () => NvmlRefreshCost | null = () => null): void {
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'stats') send({ type: 'stats', rssBytes: process.memoryUsage().rss, nvmlRefresh: nvmlRefresh() });
    if (message.type === 'stop') void close().then(() => process.exit(0));
  });
  send({ type: 'ready', url });
}

async function documentFromParent(): Promise<ServedDocument> {
  const [setup] = (await once(process, 'message')) as [ParentMessage];
  if (setup.type !== 'serve-document') throw new Error(`server expected the document first, got ${setup.type}`);
  return setup;
}

async function serveApp(): Promise<void> {
  const { buildApp } = await import('../server/app.js');
  const { inertTopology } = await import('../server/api/inert-topology.js');
  const { body, etag } = await documentFromParent();
  const topology = inertTopology({
    getTopology: (id) =>
      id === '0' ? { kind: 'ready', document: { value: JSON.parse(body) as PreparedDocument['value'], body, etag } } : { kind: 'unknown' },
    health: () => ({ ready: true, checks: {} }),
  });
  const app = await buildApp({ config: { adminToken: null, bodyLimitBytes: 16 * 1024 }, topology, version: 'bench' });
  answerParent(await app.listen({ host: '127.0.0.1', port: 0 }), () => app.close());
}

async function serveBare(): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const { body, etag, conditional } = await documentFromParent();
  const app = Fastify();
  app.get(TOPOLOGY_PATH, (request, reply) => {
    if (conditional && request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(body);
  });
  answerParent(await app.listen({ host: '127.0.0.1', port: 0 }), () => app.close());
}

// --------------------------------------------------------------- parent side

export interface ServerHandle {
  url: string;
  stats(): Promise<StatsMessage>;
  stop(): Promise<void>;
}

async function nextMessage<T extends { type: string }>(child: ChildProcess, type: T['type']): Promise<T> {
  for (;;) {
    const [message] = (await Promise.race([
      once(child, 'message'),
      once(child, 'exit').then(([code]) => Promise.reject(new Error(`server child exited (${code})`))),
    ])) as [T];
    if (message.type === type) return message;
  }
}

/** Starts one server in a fresh process (this file, re-run with --serve). */
export async function startServer(kind: ServerKind, document?: ServedDocument): Promise<ServerHandle> {
  // Every server runs with the daemon's production V8 flags (BENCH_NODE_FLAGS overrides, space-separated), like for like.
  const nodeFlags =
    process.env.BENCH_NODE_FLAGS !== undefined ? process.env.BENCH_NODE_FLAGS.split(' ').filter(Boolean) : DAEMON_NODE_FLAGS;
  const execArgv = [...(import.meta.url.endsWith('.ts') ? ['--import', 'tsx'] : []), ...nodeFlags];
  const child = fork(fileURLToPath(import.meta.url), ['--serve', kind], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  if (kind !== 'daemon') {
    if (!document) throw new Error(`the ${kind} server needs the document to send`);
    child.send({ type: 'serve-document', ...document } satisfies ParentMessage);
  }
  const { url } = await nextMessage<ReadyMessage>(child, 'ready');
  return {
    url,
    async stats() {
      child.send({ type: 'stats' } satisfies ParentMessage);
      return nextMessage<StatsMessage>(child, 'stats');
    },
    async stop() {
      child.send({ type: 'stop' } satisfies ParentMessage);
      await once(child, 'exit');
    },
  };
}

interface AutocannonResult {
  requests: { total: number };
  duration: number;
  latency: { p99: number };
  errors: number;
  timeouts: number;
  statusCodeStats?: Record<string, { count: number }>;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
}) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
export const SLICE_S = Number(process.env.BENCH_SLICE_S ?? 2);

export interface CaseResult {
  name: string;
  requestsPerSec: number;
  /** Median over the slices of each slice's p99. */
  p99Ms: number;
  rssMb: number;
  statusCodes: string;
  failures: number;
  nvmlRefresh: NvmlRefreshCost | null;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** One case: its server and the autocannon slices run against it. */
class Case {
  readonly slices: AutocannonResult[] = [];
  constructor(
    readonly name: string,
    readonly server: ServerHandle,
    private readonly headers: Record<string, string>,
  ) {}

  async load(durationS: number): Promise<AutocannonResult> {
    return autocannon({ url: this.server.url + TOPOLOGY_PATH, connections: CONNECTIONS, duration: durationS, headers: this.headers });
  }

  async slice(): Promise<void> {
    this.slices.push(await this.load(SLICE_S));
  }

  rate(index: number): number {
    const slice = this.slices[index];
    return slice ? slice.requests.total / slice.duration : 0;
  }

  async result(): Promise<CaseResult> {
    const stats = await this.server.stats();
    const codes = new Map<string, number>();
    for (const slice of this.slices) {
      for (const [code, { count }] of Object.entries(slice.statusCodeStats ?? {})) codes.set(code, (codes.get(code) ?? 0) + count);
    }
    const total = (pick: (r: AutocannonResult) => number) => this.slices.reduce((sum, r) => sum + pick(r), 0);
    return {
      name: this.name,
      requestsPerSec: total((r) => r.requests.total) / total((r) => r.duration),
      p99Ms: median(this.slices.map((r) => r.latency.p99)),
      rssMb: stats.rssBytes / 2 ** 20,
      statusCodes: [...codes].map(([code, count]) => `${code}×${count}`).join(' '),
      failures: total((r) => r.errors + r.timeouts),
      nvmlRefresh: stats.nvmlRefresh,
    };
  }
}

export function machine(): string {
  const cpus = os.cpus();
  const loader = import.meta.url.endsWith('.ts') ? 'tsx' : 'compiled JS';
  return `${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, Node ${process.version}, ${os.platform()} ${os.release()}, servers under ${loader}`;
}

export function printTable(results: CaseResult[]): void {
  console.log(
    `\n${CONNECTIONS} connections, ${DURATION_S} s per case in ${SLICE_S} s slices rotating between the cases, after ${WARMUP_S} s warm-up each`,
  );
  console.table(
    results.map((r) => ({
      case: r.name,
      'req/s': Math.round(r.requestsPerSec),
      'p99 ms': r.p99Ms,
      'RSS MB': Number(r.rssMb.toFixed(1)),
      statuses: r.statusCodes,
      failures: r.failures,
    })),
  );
  console.log(`machine: ${machine()}`);
}

/** Fetches the daemon's document once: the bytes the bare route will send, and its ETag. */
export async function fetchDocument(url: string): Promise<{ body: string; etag: string }> {
  const res = await fetch(url + TOPOLOGY_PATH);
  const body = await res.text();
  const etag = res.headers.get('etag');
  if (res.status !== 200 || etag === null)
    throw new Error(`the daemon did not serve GPU 0's topology (HTTP ${res.status}): ${body.slice(0, 300)}`);
  return { body, etag };
}

export interface Comparison {
  ours: CaseResult;
  /** Our HTTP layer over an in-memory topology: what the routes cost without the daemon around them. */
  app: CaseResult;
  bare: CaseResult;
  /** Median over slice rounds of ours/bare: neighbours' load shifts every case of a round alike. */
  ratio: number;
}

/**
 * All servers up (each its own fresh process), then short load slices
 * rotating between them, so CPU stolen by other work on a shared machine
 * lands on every case alike.
 */
export async function compare(conditional: boolean): Promise<Comparison> {
  const daemonServer = await startServer('daemon');
  const fetched = await fetchDocument(daemonServer.url);
  const document = { ...fetched, conditional };
  const [appServer, bareServer] = await Promise.all([startServer('app', document), startServer('bare', document)]);
  console.log(`document: ${fetched.body.length} bytes, ETag ${fetched.etag}`);
  const headers: Record<string, string> = conditional ? { 'if-none-match': fetched.etag } : {};
  const cases = [
    new Case('topod daemon', daemonServer, headers),
    new Case('topod app, in-memory topology', appServer, headers),
    new Case('bare fastify', bareServer, headers),
  ] as const;
  for (const c of cases) await c.load(WARMUP_S);
  const rounds = Math.max(1, Math.round(DURATION_S / SLICE_S));
  for (let i = 0; i < rounds; i++) {
    for (let k = 0; k < cases.length; k++) await (cases[(i + k) % cases.length] as Case).slice();
  }
  const [ours, app, bare] = cases;
  const ratios = Array.from({ length: rounds }, (_, i) => ours.rate(i) / bare.rate(i));
  const comparison = { ours: await ours.result(), app: await app.result(), bare: await bare.result(), ratio: median(ratios) };
  await Promise.all([daemonServer.stop(), appServer.stop(), bareServer.stop()]);
  console.log(`per-round ratios daemon/bare: ${ratios.map((r) => r.toFixed(2)).join(' ')}`);
  return comparison;
}

async function main(): Promise<void> {
  const { ours, app, bare, ratio } = await compare(false);
  printTable([ours, app, bare]);
  console.log(`goals: ratio >= 0.8, p99 < 10 ms, RSS < 150 MB; topod p99 ${ours.p99Ms} ms, RSS ${ours.rssMb.toFixed(1)} MB`);
  console.log(`ratio ours/bare: ${ratio.toFixed(3)}`);
}

const serveIndex = process.argv.indexOf('--serve');
if (serveIndex !== -1) {
  const kind = process.argv[serveIndex + 1];
  const serve = { daemon: serveDaemon, app: serveApp, bare: serveBare }[kind as ServerKind] ?? serveBare;
  serve().catch((error: unknown) => {
    console.error(`bench server (${kind}) failed:`, error);
    process.exit(1);
  });
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
