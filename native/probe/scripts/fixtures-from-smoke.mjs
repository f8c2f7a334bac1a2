#!/usr/bin/env node
// Splits a smoke.sh run (requests.jsonl + responses.jsonl + env.txt) into
// fixture files for analysis tests: one JSON per benchmark family, each with
// the run's metadata and every {op, args, result|error} it holds.
//   node native/probe/scripts/fixtures-from-smoke.mjs <smoke-dir> <fixture-dir> [note]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const [smokeDir, outDir, note = ''] = process.argv.slice(2);
if (!smokeDir || !outDir) {
  console.error('usage: fixtures-from-smoke.mjs <smoke-dir> <fixture-dir> [note]');
  process.exit(2);
}

const lines = (file) =>
  readFileSync(path.join(smokeDir, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim());
const parseOrNull = (l) => {
  try {
    return JSON.parse(l);
  } catch {
    return null;
  }
};
const requests = lines('requests.jsonl').map((l) => ({ raw: l, parsed: parseOrNull(l) }));
const responses = lines('responses.jsonl').map((l) => JSON.parse(l));
const env = readFileSync(path.join(smokeDir, 'env.txt'), 'utf8');

// env.txt holds nvidia-smi's CSV: header line, then one line per GPU.
const csv = env.split('\n').filter((l) => l.includes(', ') && !l.startsWith('probe exit'));
const [name, uuid, driverVersion] = (csv[1] ?? '').split(', ');
const hello = responses.find((r) => r.ok && r.result?.devices)?.result;
const meta = {
  gpuName: name,
  gpuUuid: uuid,
  driverVersion,
  cudaRuntimeVersion: hello?.runtimeVersion,
  probeVersion: hello?.probeVersion,
  date: /^date: (.*)$/m.exec(env)?.[1],
  command: 'native/probe/scripts/smoke.sh native/probe/build/topod-probe $OUT/smoke',
  build: 'node scripts/build-probe.mjs (nvcc 13.0, CMAKE_CUDA_ARCHITECTURES=80;90)',
  nvidiaSmi: csv.join('\n'),
  note,
};

// Responses come back in request order; a request that is not valid JSON gets an id-null answer.
const entries = requests.map((req, i) => {
  const res = responses[i];
  const entry = req.parsed ? { id: req.parsed.id, op: req.parsed.op, args: req.parsed.args } : { id: null, rawRequest: req.raw };
  return res?.ok ? { ...entry, result: res.result } : { ...entry, error: res?.error };
});

// Launch settings (issue 8: flushL2, carveoutPercent, l2FetchGranularityBytes) go to their own family, so the older ones keep their shape.
const LAUNCH_ARGS = ['flushL2', 'carveoutPercent', 'l2FetchGranularityBytes'];
const plain = (a) => LAUNCH_ARGS.every((k) => a?.[k] === undefined);
const isChase = (e, pred) => e.op === 'pchase' && e.result && plain(e.args) && pred(e.args);
const families = {
  'hello.json': entries.filter((e) => e.op === 'hello' && e.result).slice(0, 1),
  'calibrate.json': entries.filter((e) => e.op === 'calibrate'),
  'latency-by-space.json': entries.filter((e) => isChase(e, (a) => a.arrayBytes <= 16384 && a.warmup)),
  'l1-sweep.json': entries.filter((e) => e.op === 'pchase.batch' && plain(e.args) && e.args.space !== 'constant'),
  'constant-sweep.json': entries.filter((e) => e.op === 'pchase.batch' && plain(e.args) && e.args.space === 'constant'),
  'l2-sweep.json': entries.filter((e) => isChase(e, (a) => a.space === 'global.cg' && a.warmup && a.arrayBytes >= 8 << 20)),
  'device-memory.json': entries.filter((e) => isChase(e, (a) => a.space === 'global.cg' && !a.warmup && a.arrayBytes >= 1 << 30)),
  'line-size.json': entries.filter((e) => isChase(e, (a) => a.strideBytes === 32 && !a.warmup)),
  'pair.json': entries.filter((e) => e.op === 'pchase.pair' && plain(e.args)),
  'launch-settings.json': entries.filter((e) => (e.op === 'pchase' || e.op === 'pchase.batch') && e.result && !plain(e.args)),
  'consumer-selftest.json': entries.filter((e) => e.op === 'selftest.consumer' && e.result),
  'bandwidth.json': entries.filter((e) => e.op === 'bandwidth'),
  'bad-requests.json': entries.filter((e) => e.error),
};

mkdirSync(outDir, { recursive: true });
for (const [file, list] of Object.entries(families)) {
  writeFileSync(path.join(outDir, file), `${JSON.stringify({ meta, entries: list })}\n`);
  console.log(`${file}: ${list.length} entries`);
}
