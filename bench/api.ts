/**
 * `npm run bench:api` — GET /v1/gpus/0/topology on the real daemon (sim
 * backend, one probed GPU) against a bare fastify route sending the same
 * bytes. Each server is a fresh child process; autocannon runs in this one.
 * Prints req/s, p99 latency, RSS after each case, the machine, and last the
 * ratio ours/bare. bench/poll.ts reuses the harness exported here.
 *
 * Environment: BENCH_DURATION_S (default 10), BENCH_CONNECTIONS (default 100),
 * BENCH_ROUNDS (default 3). Children run under the parent's loader: tsx adds
 * ~30 MB RSS, so for production memory figures build and run
 * `node dist/bench/api.js`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import os from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const TOPOLOGY_PATH = '/v1/gpus/0/topology';
const WARMUP_S = 2;

export type ServerKind = 'daemon' | 'bare';

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

type ParentMessage = { type: 'serve-bare'; body: string; etag: string; conditional: boolean } | { type: 'stats' } | { type: 'stop' };

// ---------------------------------------------------------------- child side

function send(message: ReadyMessage | StatsMessage): void {
  process.send?.(message);
}

/**
 * Hook for the poll benchmark: what one NVML refresh costs in the daemon
 * (DynamicPoller.getStats). Returns null when the daemon runs without a poller.
 */
function readNvmlRefreshCost(daemon: { poller: { getStats(): { reads: number; lastReadDurationMs: number | null } } | null }): NvmlRefreshCost | null {
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
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'stats') send({ type: 'stats', rssBytes: process.memoryUsage().rss, nvmlRefresh: readNvmlRefreshCost(daemon) });
    if (message.type === 'stop') void daemon.close().then(() => process.exit(0));
  });
  send({ type: 'ready', url });
}

async function serveBare(): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const [setup] = (await once(process, 'message')) as [ParentMessage];
  if (setup.type !== 'serve-bare') throw new Error(`bare server expected its body first, got ${setup.type}`);
  const { body, etag, conditional } = setup;
  const app = Fastify();
  app.get(TOPOLOGY_PATH, (request, reply) => {
    if (conditional && request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(body);
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'stats') send({ type: 'stats', rssBytes: process.memoryUsage().rss, nvmlRefresh: null });
    if (message.type === 'stop') void app.close().then(() => process.exit(0));
  });
  send({ type: 'ready', url });
}

// --------------------------------------------------------------- parent side

export interface ServerHandle {
  url: string;
  stats(): Promise<StatsMessage>;
  stop(): Promise<void>;
}

async function nextMessage<T extends { type: string }>(child: ChildProcess, type: T['type']): Promise<T> {
  for (;;) {
    const [message] = (await Promise.race([once(child, 'message'), once(child, 'exit').then(([code]) => Promise.reject(new Error(`server child exited (${code})`)))])) as [T];
    if (message.type === type) return message;
  }
}

/** Starts one server in a fresh process (this file, re-run with --serve). */
export async function startServer(kind: ServerKind, bare?: { body: string; etag: string; conditional: boolean }): Promise<ServerHandle> {
  const execArgv = import.meta.url.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = fork(fileURLToPath(import.meta.url), ['--serve', kind], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  if (kind === 'bare') {
    if (!bare) throw new Error('the bare server needs the body to send');
    child.send({ type: 'serve-bare', ...bare } satisfies ParentMessage);
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
  requests: { average: number };
  latency: { p99: number; average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  '2xx': number;
  '3xx'?: number;
  statusCodeStats?: Record<string, { count: number }>;
}
type Autocannon = (options: { url: string; connections: number; duration: number; headers?: Record<string, string> }) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

export interface CaseResult {
  name: string;
  requestsPerSec: number;
  p99Ms: number;
  rssMb: number;
  statusCodes: string;
  failures: number;
  nvmlRefresh: NvmlRefreshCost | null;
}

/** Warms up, then loads `url` for DURATION_S and reads the server's RSS after. */
export async function measure(name: string, server: ServerHandle, headers: Record<string, string> = {}): Promise<CaseResult> {
  const url = server.url + TOPOLOGY_PATH;
  await autocannon({ url, connections: CONNECTIONS, duration: WARMUP_S, headers });
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S, headers });
  const stats = await server.stats();
  const codes = Object.entries(result.statusCodeStats ?? {})
    .map(([code, { count }]) => `${code}×${count}`)
    .join(' ');
  return {
    name,
    requestsPerSec: result.requests.average,
    p99Ms: result.latency.p99,
    rssMb: stats.rssBytes / 2 ** 20,
    statusCodes: codes,
    failures: result.errors + result.timeouts,
    nvmlRefresh: stats.nvmlRefresh,
  };
}

export function machine(): string {
  const cpus = os.cpus();
  const loader = import.meta.url.endsWith('.ts') ? 'tsx' : 'compiled JS';
  return `${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, Node ${process.version}, ${os.platform()} ${os.release()}, servers under ${loader}`;
}

export function printTable(results: CaseResult[]): void {
  console.log(`\n${CONNECTIONS} connections, ${DURATION_S} s per case after ${WARMUP_S} s warm-up, best of ${ROUNDS} alternating rounds`);
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
  if (res.status !== 200 || etag === null) throw new Error(`the daemon did not serve GPU 0's topology (HTTP ${res.status}): ${body.slice(0, 300)}`);
  return { body, etag };
}

/** One round: the daemon case then the bare case, each in its own fresh process. */
async function round(conditional: boolean): Promise<[CaseResult, CaseResult]> {
  const daemon = await startServer('daemon');
  const document = await fetchDocument(daemon.url);
  const headers: Record<string, string> = conditional ? { 'if-none-match': document.etag } : {};
  const ours = await measure('topod', daemon, headers);
  await daemon.stop();
  const bareServer = await startServer('bare', { ...document, conditional });
  const bare = await measure('bare fastify', bareServer, headers);
  await bareServer.stop();
  console.log(`round: topod ${Math.round(ours.requestsPerSec)} req/s, bare ${Math.round(bare.requestsPerSec)} req/s (document ${document.body.length} bytes, ETag ${document.etag})`);
  return [ours, bare];
}

const best = (results: CaseResult[]): CaseResult => results.reduce((a, b) => (b.requestsPerSec > a.requestsPerSec ? b : a));

/**
 * BENCH_ROUNDS alternating rounds; each case keeps its best round, so a
 * neighbour stealing the CPU for a while (shared machines) hurts neither side.
 */
export async function compare(conditional: boolean): Promise<[CaseResult, CaseResult]> {
  const rounds: Array<[CaseResult, CaseResult]> = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round(conditional));
  return [best(rounds.map(([ours]) => ours)), best(rounds.map(([, bare]) => bare))];
}

async function main(): Promise<void> {
  const [ours, bare] = await compare(false);
  printTable([ours, bare]);
  console.log(`goals: ratio >= 0.8, p99 < 10 ms, RSS < 150 MB; topod p99 ${ours.p99Ms} ms, RSS ${ours.rssMb.toFixed(1)} MB`);
  console.log(`ratio ours/bare: ${(ours.requestsPerSec / bare.requestsPerSec).toFixed(3)}`);
}

const serveIndex = process.argv.indexOf('--serve');
if (serveIndex !== -1) {
  const kind = process.argv[serveIndex + 1];
  (kind === 'daemon' ? serveDaemon() : serveBare()).catch((error: unknown) => {
    console.error(`bench server (${kind}) failed:`, error);
    process.exit(1);
  });
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
