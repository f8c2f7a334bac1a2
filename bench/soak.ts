/**
 * `npm run bench:soak` — the daemon for a while under what a node sees:
 * the simulator beside fake NVML whose MIG layout flips every few seconds,
 * a forced probe every minute, 100 pollers asking for the topology with
 * If-None-Match, and 50 event-stream clients connecting and dropping. Every
 * 10 s it prints the daemon's RSS and heap, open descriptors and event-loop
 * delay p99 (measured inside it, bench/soak-daemon.ts) and the database's
 * size; at the end it fails (exit 1) if RSS grew more than 10 % after
 * warm-up, descriptors leaked, or the database outgrew what retention keeps
 * (a re-analysis every few seconds stores a result each time, retention
 * keeps SOAK_RETAIN of them: issue 22's file held 11 results in 127 MB).
 *
 * Environment: SOAK_SECONDS (default 600; 60 for a smoke run), SOAK_POLLERS
 * (100), SOAK_STREAMS (50), SOAK_MIG_MS (3000), SOAK_PROBE_MS (60000),
 * SOAK_REANALYSE_MS (5000), SOAK_RETAIN (3),
 * SOAK_WARMUP_S (default a fifth of the run, at most 120).
 * Needs the fake NVML library (npm ci builds native/fake-nvml).
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SoakStats } from './soak-daemon.js';

const num = (name: string, fallback: number): number => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
};

const SECONDS = num('SOAK_SECONDS', 600);
const POLLERS = num('SOAK_POLLERS', 100);
const STREAMS = num('SOAK_STREAMS', 50);
const MIG_MS = num('SOAK_MIG_MS', 3000);
const PROBE_MS = num('SOAK_PROBE_MS', 60_000);
const REANALYSE_MS = num('SOAK_REANALYSE_MS', 5000);
const RETAIN = num('SOAK_RETAIN', 3);
const WARMUP_S = num('SOAK_WARMUP_S', Math.min(120, Math.max(10, SECONDS / 5)));
const SAMPLE_MS = 10_000;
const RSS_GROWTH_LIMIT = 0.1;
const FD_SLACK = 8;
/** The database may end at most this much above its size in the first third after warm-up, plus DB_SLACK_BYTES. */
const DB_GROWTH_LIMIT = 0.5;
const DB_SLACK_BYTES = 4 * 2 ** 20;

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, here.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..');
const fakeNvml = path.join(root, 'native/fake-nvml/build/libnvidia-ml.so.1');
if (!existsSync(fakeNvml)) throw new Error(`${fakeNvml} is missing: run npm ci (it builds the fake NVML library)`);

const dir = mkdtempSync(path.join(os.tmpdir(), 'topod-soak-'));
const scenarioPath = path.join(dir, 'scenario.json');
const off = JSON.parse(readFileSync(path.join(root, 'test/fixtures/nvml/h100-80gb-mig-off.json'), 'utf8')) as {
  devices: Array<{ uuid: string }>;
};
const mixed = JSON.parse(readFileSync(path.join(root, 'test/fixtures/nvml/h100-80gb-mig-mixed.json'), 'utf8')) as {
  devices: Array<{ uuid: string }>;
};
const uuid = off.devices[0]?.uuid as string;
(mixed.devices[0] as { uuid: string }).uuid = uuid;
const writeScenario = (value: unknown) => {
  writeFileSync(`${scenarioPath}.tmp`, JSON.stringify(value));
  renameSync(`${scenarioPath}.tmp`, scenarioPath);
};
writeScenario(off);

const daemonScript = path.join(here, `soak-daemon.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`);
const child = fork(daemonScript, [], {
  execArgv: [...(import.meta.url.endsWith('.ts') ? ['--import', 'tsx'] : []), '--max-semi-space-size=4'],
  env: {
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? '',
    TOPOD_BACKEND: 'sim',
    TOPOD_PORT: '0',
    TOPOD_DB: path.join(dir, 'topod.sqlite'),
    TOPOD_RETAIN_RESULTS: String(RETAIN),
    TOPOD_NVML_LIB: fakeNvml,
    TOPOD_FAKE_NVML_SCENARIO: scenarioPath,
    TOPOD_POLL_MS: '500',
    TOPOD_LOG_LEVEL: 'error',
    TOPOD_MAX_EVENT_STREAMS: String(STREAMS * 2),
  },
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const [ready] = (await once(child, 'message')) as [{ type: string; url: string }];
const base = ready.url;

async function stats(): Promise<SoakStats> {
  child.send({ type: 'stats' });
  for (;;) {
    const [message] = (await once(child, 'message')) as [SoakStats];
    if (message.type === 'stats') return message;
  }
}

const counters = { polls: 0, notModified: 0, ok: 0, errors: 0, streams: 0, events: 0, probes: 0, migFlips: 0, reanalyses: 0 };
const dbFile = path.join(dir, 'topod.sqlite');
/** The database's bytes on disk: the file and its WAL. */
const dbBytes = (): number => [dbFile, `${dbFile}-wal`].reduce((sum, f) => sum + (existsSync(f) ? statSync(f).size : 0), 0);
let stopping = false;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function poller(): Promise<void> {
  let etag: string | null = null;
  while (!stopping) {
    try {
      const res: Response = await fetch(`${base}/v1/gpus/${uuid}/topology`, { headers: etag ? { 'if-none-match': etag } : {} });
      counters.polls++;
      if (res.status === 304) counters.notModified++;
      else if (res.ok) {
        counters.ok++;
        etag = res.headers.get('etag');
      }
      await res.arrayBuffer();
    } catch {
      counters.errors++;
    }
    await sleep(900 + Math.random() * 200);
  }
}

async function streamer(): Promise<void> {
  while (!stopping) {
    const controller = new AbortController();
    const lifeMs = 1000 + Math.random() * 9000;
    const timer = setTimeout(() => controller.abort(), lifeMs);
    try {
      const res = await fetch(`${base}/v1/events`, { signal: controller.signal });
      counters.streams++;
      const reader = res.body?.getReader();
      for (;;) {
        const chunk = await reader?.read();
        if (!chunk || chunk.done) break;
        counters.events += (new TextDecoder().decode(chunk.value).match(/^event: /gm) ?? []).length;
      }
    } catch {
      // aborted on purpose
    } finally {
      clearTimeout(timer);
    }
    await sleep(200 + Math.random() * 800);
  }
}

const migTimer = setInterval(() => {
  counters.migFlips++;
  writeScenario(counters.migFlips % 2 === 1 ? mixed : off);
}, MIG_MS);
const probeTimer = setInterval(() => {
  void fetch(`${base}/v1/gpus/${uuid}/probe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"force":true}' })
    .then((res) => (res.status === 202 ? counters.probes++ : counters.errors++))
    .catch(() => counters.errors++);
}, PROBE_MS);
const reanalyseTimer = setInterval(() => {
  // 409 until the first probe has stored a result.
  void fetch(`${base}/v1/gpus/${uuid}/reanalyse`, { method: 'POST' })
    .then((res) => (res.status === 200 ? counters.reanalyses++ : res.status === 409 ? undefined : counters.errors++))
    .catch(() => counters.errors++);
}, REANALYSE_MS);

const workers = [...Array.from({ length: POLLERS }, poller), ...Array.from({ length: STREAMS }, streamer)];

console.log(
  `topod soak: ${SECONDS} s, ${POLLERS} pollers, ${STREAMS} event streams, MIG flip every ${MIG_MS} ms, forced probe every ${PROBE_MS} ms, warm-up ${WARMUP_S} s`,
);
console.log(
  `machine: ${os.cpus()[0]?.model ?? 'unknown'} x${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`,
);
console.log('  t(s)  rss(MB) heap(MB)  fds  loop p99(ms)   polls   304s  streams  events probes reanal.  db(MB) errors');
const samples: Array<{ t: number; dbBytes: number } & SoakStats> = [];
const started = Date.now();
while (Date.now() - started < SECONDS * 1000) {
  await sleep(Math.min(SAMPLE_MS, SECONDS * 1000 - (Date.now() - started)));
  const s = await stats();
  const t = Math.round((Date.now() - started) / 1000);
  samples.push({ t, dbBytes: dbBytes(), ...s });
  console.log(
    `${String(t).padStart(6)} ${(s.rssBytes / 2 ** 20).toFixed(1).padStart(8)} ${(s.heapUsedBytes / 2 ** 20).toFixed(1).padStart(8)} ${String(s.openFds).padStart(4)} ${s.eventLoopP99Ms.toFixed(1).padStart(13)} ${String(counters.polls).padStart(7)} ${String(counters.notModified).padStart(6)} ${String(counters.streams).padStart(8)} ${String(counters.events).padStart(7)} ${String(counters.probes).padStart(6)} ${String(counters.reanalyses).padStart(7)} ${(dbBytes() / 2 ** 20).toFixed(1).padStart(7)} ${String(counters.errors).padStart(6)}`,
  );
}

stopping = true;
clearInterval(migTimer);
clearInterval(probeTimer);
clearInterval(reanalyseTimer);
await Promise.all(workers);
await sleep(2000);
const idle = await stats();

const afterWarmup = samples.filter((s) => s.t >= WARMUP_S);
// RSS swings by 20–30 MB with each probe and the collection after it, so a sample or three catch a crest or a
// trough by chance (10.9 % "growth" from a trough to a crest in one leak-free run). The high-water mark of the
// first third after warm-up against that of the last third follows a leak and ignores the swing.
const third = Math.max(1, Math.floor(afterWarmup.length / 3));
const baseline = afterWarmup.slice(0, third);
const final = afterWarmup.slice(-third);
const peak = (values: number[]) => Math.max(0, ...values);
const rssBase = peak(baseline.map((s) => s.rssBytes));
const rssEnd = peak(final.map((s) => s.rssBytes));
const growth = rssBase > 0 ? rssEnd / rssBase - 1 : 0;
const dbBase = peak(baseline.map((s) => s.dbBytes));
const dbEnd = peak(final.map((s) => s.dbBytes));
const fdBase = Math.min(...(baseline.length ? baseline : samples).map((s) => s.openFds));
const failures: string[] = [];
if (afterWarmup.length < 2) failures.push(`too short to judge: ${afterWarmup.length} samples after the ${WARMUP_S} s warm-up`);
if (growth > RSS_GROWTH_LIMIT)
  failures.push(
    `peak RSS grew ${(growth * 100).toFixed(1)} % after warm-up (${(rssBase / 2 ** 20).toFixed(1)} → ${(rssEnd / 2 ** 20).toFixed(1)} MB; limit ${RSS_GROWTH_LIMIT * 100} %)`,
  );
if (idle.openFds > fdBase + FD_SLACK)
  failures.push(`descriptors leak: ${idle.openFds} open with every client gone, ${fdBase} under load after warm-up`);
if (counters.polls === 0 || counters.streams === 0) failures.push('no traffic reached the daemon');
if (dbEnd > dbBase * (1 + DB_GROWTH_LIMIT) + DB_SLACK_BYTES) {
  failures.push(
    `the database grew from ${(dbBase / 2 ** 20).toFixed(1)} to ${(dbEnd / 2 ** 20).toFixed(1)} MB after warm-up while retention keeps ${RETAIN} results (limit +${DB_GROWTH_LIMIT * 100} % + ${DB_SLACK_BYTES / 2 ** 20} MB)`,
  );
}

console.log(
  `summary: peak RSS ${(rssBase / 2 ** 20).toFixed(1)} (first third after warm-up) → ${(rssEnd / 2 ** 20).toFixed(1)} MB (last third) (${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)} %), ` +
    `fds ${fdBase} under load → ${idle.openFds} idle, database ${(dbBase / 2 ** 20).toFixed(1)} → ${(dbEnd / 2 ** 20).toFixed(1)} MB, event-loop p99 max ${Math.max(...samples.map((s) => s.eventLoopP99Ms)).toFixed(1)} ms, ` +
    `${counters.polls} polls (${counters.notModified} × 304), ${counters.streams} streams, ${counters.events} events, ${counters.migFlips} MIG flips, ${counters.probes} probes, ${counters.reanalyses} re-analyses, ${counters.errors} errors`,
);
child.send({ type: 'stop' });
await once(child, 'exit');
rmSync(dir, { recursive: true, force: true });
if (failures.length > 0) {
  for (const failure of failures) console.log(`FAIL: ${failure}`);
  process.exit(1);
}
console.log('PASS: RSS flat, no descriptor leak, database bounded by retention');
