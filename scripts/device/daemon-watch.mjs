// Watches a running daemon for the trust checks (scripts/device/trust-suite.sh):
// polls GET /v1/gpus/0/topology and /healthz every --interval-ms, logs each job
// state change of GPU 0 with the time since start, and stops when the GPU's
// latest job reaches --until (a job state) or --timeout-s passes. Writes the
// states, the answer latencies and the served document to --out (JSON).
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .map((arg, i, all) => (arg.startsWith('--') ? [arg.slice(2), all[i + 1]] : null))
    .filter(Boolean),
);
const base = args.url ?? 'http://127.0.0.1:18080';
const until = (args.until ?? 'succeeded').split(',');
const timeoutMs = Number(args['timeout-s'] ?? 120) * 1000;
const intervalMs = Number(args['interval-ms'] ?? 50);
const started = performance.now();
const states = [];
const latencies = { topology: [], healthz: [] };
let last = null;
let job = null;

async function timed(path, bucket) {
  const t0 = performance.now();
  try {
    const res = await fetch(base + path);
    await res.arrayBuffer();
    latencies[bucket].push(performance.now() - t0);
    return res.status;
  } catch {
    return 0;
  }
}

const at = () => Math.round(performance.now() - started);
while (performance.now() - started < timeoutMs) {
  await timed('/v1/gpus/0/topology', 'topology');
  await timed('/healthz', 'healthz');
  try {
    const jobs = await (await fetch(`${base}/v1/jobs?gpu=0&limit=1`)).json();
    job = jobs.jobs?.[0] ?? null;
  } catch {
    job = null;
  }
  const now = job
    ? `${job.state}${job.phase ? `: ${job.phase}` : ''}${job.error ? ` (${job.error.code}: ${job.error.message})` : ''}`
    : 'no job';
  if (now !== last) {
    states.push({ atMs: at(), state: now });
    console.log(`${String(at()).padStart(7)} ms  ${now}`);
    last = now;
  }
  if (job && until.includes(job.state)) break;
  await new Promise((r) => setTimeout(r, intervalMs));
}
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : null;
};
const summary = Object.fromEntries(
  Object.entries(latencies).map(([k, xs]) => [
    k,
    { answers: xs.length, p50Ms: quantile(xs, 0.5), p99Ms: quantile(xs, 0.99), maxMs: xs.length ? Math.max(...xs) : null },
  ]),
);
console.log(JSON.stringify(summary));
let document = null;
try {
  const res = await fetch(`${base}/v1/gpus/0/topology`);
  if (res.status === 200) document = await res.json();
} catch {}
if (args.out) writeFileSync(args.out, JSON.stringify({ states, job, latencies: summary, document }, null, 1));
process.exit(job && until.includes(job.state) ? 0 : 1);
