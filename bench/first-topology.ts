/**
 * `npm run bench:first-topology [-- --runs 3 --backend native|sim --json out.json]`
 * — issue 19: how soon a fresh daemon serves its first GPU's topology. Starts
 * the built daemon (dist/server/main.js with `npm start`'s flags) on a fresh
 * database and a free port, asks `GET /v1/gpus/0/topology` every 10 ms, and
 * prints from the daemon's spawn: its first HTTP answer, the probe job's
 * start and end (from /v1/jobs), and the first 200. With --timeline, the
 * daemon's own log (debug level) as milliseconds since the spawn, to see what
 * the time before the probe goes to. Goal: the topology ≤ 4 s after the start.
 *
 * Build first (`tsc -p tsconfig.build.json`), then `node dist/bench/first-topology.js`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { DAEMON_NODE_FLAGS } from '../server/node-flags.js';
import { freePort } from './free-port.js';
import { projectRoot } from '../server/paths.js';

const GOAL_MS = 4000;
const POLL_MS = 10;
const TIMEOUT_MS = 120_000;

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    backend: { type: 'string', default: 'native' },
    json: { type: 'string' },
    timeline: { type: 'boolean', default: false },
    daemon: { type: 'string' },
  },
});
const runs = Number(values.runs);
/** Another build's entry (e.g. an older commit's dist/server/main.js), to compare on the same GPU. */
const daemonEntry = values.daemon ?? path.join(projectRoot(), 'dist/server/main.js');
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer (got ${values.runs})`);

interface RunFigures {
  firstAnswerMs: number;
  jobStartedMs: number | null;
  jobFinishedMs: number | null;
  topologyMs: number;
  timeline: string[];
}

async function statusOf(url: string): Promise<number> {
  try {
    const response = await fetch(url);
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

async function oneRun(): Promise<RunFigures> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'topod-first-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    TOPOD_DB: path.join(dir, 'topod.sqlite'),
    TOPOD_PORT: String(port),
    TOPOD_BACKEND: values.backend,
    TOPOD_LOG_LEVEL: 'debug',
    TOPOD_LOCK_DIR: dir,
  };
  const spawnedAt = Date.now();
  const daemon = spawn(process.execPath, [...DAEMON_NODE_FLAGS, daemonEntry], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const timeline: string[] = [];
  let pending = '';
  daemon.stdout.setEncoding('utf8');
  daemon.stdout.on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      try {
        const entry = JSON.parse(line) as { time?: number; msg?: string; phase?: string; reqId?: string };
        // Each poll's own request lines would bury the daemon's steps.
        if (entry.time && entry.reqId === undefined)
          timeline.push(`${String(entry.time - spawnedAt).padStart(6)} ms  ${entry.msg ?? ''}${entry.phase ? ` (${entry.phase})` : ''}`);
      } catch {
        timeline.push(`         ${line}`);
      }
    }
  });
  try {
    let firstAnswerMs = -1;
    for (;;) {
      if (Date.now() - spawnedAt > TIMEOUT_MS) throw new Error(`no topology after ${TIMEOUT_MS} ms`);
      const status = await statusOf(`${base}/v1/gpus/0/topology`);
      if (status !== 0 && firstAnswerMs < 0) firstAnswerMs = Date.now() - spawnedAt;
      if (status === 200) break;
      if (daemon.exitCode !== null) throw new Error(`the daemon exited (${daemon.exitCode})`);
      // 404 until NVML or the probe has listed the GPU, 503 while its first probe runs.
      if (status !== 0 && status !== 404 && status !== 503) throw new Error(`GET /v1/gpus/0/topology answered ${status}`);
      await sleep(POLL_MS);
    }
    const topologyMs = Date.now() - spawnedAt;
    const jobs = (await (await fetch(`${base}/v1/jobs`)).json()) as { jobs?: { startedAt?: string | null; finishedAt?: string | null }[] };
    const job = jobs.jobs?.at(-1);
    const since = (stamp: string | null | undefined) => (stamp ? Date.parse(stamp) - spawnedAt : null);
    return { firstAnswerMs, jobStartedMs: since(job?.startedAt), jobFinishedMs: since(job?.finishedAt), topologyMs, timeline };
  } finally {
    daemon.kill('SIGTERM');
    await once(daemon, 'exit');
    rmSync(dir, { recursive: true, force: true });
  }
}

const figures: RunFigures[] = [];
console.log(`bench:first-topology — ${daemonEntry}, ${values.backend} backend, ${runs} run(s), fresh database each; goal ≤ ${GOAL_MS} ms`);
console.log('run   first answer   job started   job finished   topology 200');
for (let run = 1; run <= runs; run += 1) {
  const result = await oneRun();
  figures.push(result);
  const ms = (value: number | null) => (value === null ? '—' : `${value} ms`).padStart(12);
  console.log(
    `${String(run).padEnd(4)} ${ms(result.firstAnswerMs)}  ${ms(result.jobStartedMs)}  ${ms(result.jobFinishedMs)}   ${ms(result.topologyMs)}`,
  );
  if (values.timeline) for (const line of result.timeline) console.log(`      ${line}`);
}
const worst = Math.max(...figures.map((run) => run.topologyMs));
console.log(`slowest first topology ${worst} ms: ${worst <= GOAL_MS ? 'PASS' : 'FAIL'} (goal ≤ ${GOAL_MS} ms)`);
if (values.json)
  writeFileSync(
    values.json,
    JSON.stringify(
      figures.map(({ timeline: _timeline, ...rest }) => rest),
      null,
      2,
    ),
  );
process.exitCode = worst <= GOAL_MS ? 0 : 1;
