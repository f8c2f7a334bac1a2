#!/usr/bin/env node
// Turns traffic-suite.sh's probe sweep (requests-*.jsonl + probe-*.jsonl, and
// hello.json) into one fixture of raw series, named as the traffic strategy
// names its own (traffic.counters.*, traffic.timing.*, traffic.counters-refused),
// so the analysis re-reads a real GPU's run:
//   node scripts/device/traffic/fixture-from-sweep.mjs <unpacked-suite-dir> test/fixtures/h100/traffic-sweep.json.gz [note]
// (.gz: gzipped). The standalone CUPTI check's lines ride along under `standalone`.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

const [dir, out, note = ''] = process.argv.slice(2);
if (!dir || !out) {
  console.error('usage: fixture-from-sweep.mjs <suite-dir> <fixture.json> [note]');
  process.exit(2);
}
const lines = (file) =>
  existsSync(path.join(dir, file))
    ? readFileSync(path.join(dir, file), 'utf8')
        .split('\n')
        .filter((l) => l.trim())
    : [];
const raw = [];
const hello = lines('hello.json')
  .map((l) => JSON.parse(l))
  .find((r) => r.ok);
if (hello) raw.push({ name: 'hello', op: 'hello', args: {}, result: hello.result });
const errors = [];
for (const method of ['counters', 'timing']) {
  const requests = new Map(
    lines(`requests-${method}.jsonl`)
      .map((l) => JSON.parse(l))
      .map((r) => [r.id, r]),
  );
  for (const response of lines(`probe-${method}.jsonl`).map((l) => JSON.parse(l))) {
    const request = requests.get(response.id);
    if (!request) continue;
    if (response.ok) raw.push({ name: `traffic.${method}.${response.id}`, op: 'traffic', args: request.args, result: response.result });
    else if (response.error?.code === 'unsupported' && method === 'counters')
      raw.push({ name: 'traffic.counters-refused', op: 'traffic', args: request.args, result: response.error });
    else errors.push({ method, id: response.id, error: response.error });
  }
}
// The standalone CUPTI check's lines (cupti-check-<MiB>.log: a header, then one case a line), for cross-checks.
const standalone = {};
for (const mib of ['191', '763']) {
  const parsed = lines(`cupti-check-${mib}.log`).flatMap((l) => {
    try {
      return [JSON.parse(l)];
    } catch {
      return [];
    }
  });
  if (parsed.length > 0) standalone[mib] = parsed;
}
const summary = lines('summary.txt');
const fixture = { note, environment: summary.slice(0, 6), errors, raw, standalone };
const text = `${JSON.stringify(fixture)}\n`;
writeFileSync(out, out.endsWith('.gz') ? gzipSync(text) : text);
console.log(`${out}: ${raw.length} raw series, ${errors.length} error answers`);
