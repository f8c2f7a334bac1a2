/**
 * The traffic predictor's accuracy on a recorded run (issue 20), as the paper
 * reports it: 100 − |measured − predicted| / measured × 100, per stride, for
 * each pattern and footprint. The parameters are fitted on the run's largest
 * footprint and predict every footprint (the smaller one out of sample).
 * Also the timing fallback's error against the counters, per stride.
 *   npx tsx scripts/device/traffic/accuracy.ts test/fixtures/h100/traffic-sweep.json[.gz]
 * Prints markdown tables (BENCHMARKS.md, "Discovery III").
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import {
  countedPoints,
  fitTraffic,
  parametersOf,
  timedPoints,
  type TrafficPoint,
} from '../../../server/discovery/strategies/traffic-analysis.js';
import {
  accuracyPercent,
  curveCorrections,
  predictTraffic,
  predictWithCurve,
  type CurveCorrection,
} from '../../../server/discovery/traffic-predict.js';
import type { TrafficArgs, TrafficResult } from '../../../server/protocol/ops.js';
import type { RawSeries } from '../../../server/model/document.js';

const file = process.argv[2];
if (!file) {
  console.error('usage: accuracy.ts <fixture.json[.gz]>');
  process.exit(2);
}
const bytes = readFileSync(file);
const fixture = JSON.parse((file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8')) as { raw: RawSeries[] };
const series = (method: string) =>
  fixture.raw
    .filter((s) => s.op === 'traffic' && s.name.startsWith(`traffic.${method}.`))
    .map((s) => ({ result: s.result as TrafficResult, fetchLimitBytes: (s.args as TrafficArgs).l2FetchGranularityBytes ?? null }));
const counted = series('counters').flatMap(({ result, fetchLimitBytes }) => countedPoints(result, fetchLimitBytes));
const timed = timedPoints(series('timing'));
const largest = Math.max(...counted.map((p) => p.footprintBytes));
const fit = fitTraffic(counted.filter((p) => p.footprintBytes === largest && p.elementBytes === 4));
const parameters = parametersOf(fit);
if (!parameters) {
  console.error('too few points to fit the predictor');
  process.exit(1);
}
console.log(`parameters (fitted on ${largest} B): ${JSON.stringify(parameters)}\n`);

const evaluated = counted.filter((p) => p.fetchLimitBytes === null && p.elementBytes === 4);
// The measured curve of the fitted footprint, as a served document holds it.
const corrections = curveCorrections(
  parameters,
  evaluated
    .filter((p) => p.footprintBytes === largest)
    .map((p) => ({
      ...p,
      usefulBytes: 0,
      dramReadBytes: p.readBytes ?? p.totalBytes,
      dramWriteBytes: p.writeBytes ?? 0,
      bytesPerUsefulByte: 0,
      lineModelBytesPerUsefulByte: 0,
    })),
);
const predicted = (p: TrafficPoint, curve: readonly CurveCorrection[] | null) => {
  const r = curve ? predictWithCurve(parameters, curve, p) : predictTraffic(parameters, p);
  return r.readBytes + r.writeBytes;
};
const columns = [...new Set(evaluated.map((p) => `${p.pattern}/${p.target}/${p.footprintBytes}`))];
const strides = [...new Set(evaluated.map((p) => p.strideBytes))].sort((a, b) => a - b);
const label = (c: string) => {
  const [pattern, target, footprint] = c.split('/');
  return `${pattern}${pattern === 'read' ? '' : ` ${target}`} ${Math.round(Number(footprint) / 4e6)}M`;
};
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
for (const [title, curve] of [
  ['the parametric model alone', null],
  [`the model × the measured curve of ${Math.round(largest / 4e6)}M floats (the other footprint out of sample)`, corrections],
] as const) {
  console.log(`accuracy (%) of ${title}\n`);
  console.log(`| stride (floats) | ${columns.map(label).join(' | ')} |`);
  console.log(`|---:|${columns.map(() => '---:').join('|')}|`);
  const all: number[] = [];
  const byPattern = new Map<string, number[]>();
  for (const stride of strides) {
    const cells = columns.map((c) => {
      const p = evaluated.find((x) => `${x.pattern}/${x.target}/${x.footprintBytes}` === c && x.strideBytes === stride);
      if (!p) return '';
      const a = accuracyPercent(p.totalBytes, predicted(p, curve));
      all.push(a);
      byPattern.set(`${p.pattern} ${Math.round(p.footprintBytes / 4e6)}M`, [
        ...(byPattern.get(`${p.pattern} ${Math.round(p.footprintBytes / 4e6)}M`) ?? []),
        a,
      ]);
      return a.toFixed(1);
    });
    console.log(`| ${stride / 4} | ${cells.join(' | ')} |`);
  }
  console.log(
    `\nmean ${mean(all).toFixed(1)} %, worst ${Math.min(...all).toFixed(1)} % over ${all.length} points; per pattern (mean / worst): ${[...byPattern].map(([k, v]) => `${k} ${mean(v).toFixed(1)} / ${Math.min(...v).toFixed(1)}`).join(', ')}\n`,
  );
}

const byKey = new Map(
  counted.map((p) => [`${p.pattern}/${p.target}/${p.elementBytes}/${p.strideBytes}/${p.footprintBytes}/${p.fetchLimitBytes}`, p]),
);
const errors = timed
  .map((t) => ({ t, c: byKey.get(`${t.pattern}/${t.target}/${t.elementBytes}/${t.strideBytes}/${t.footprintBytes}/${t.fetchLimitBytes}`) }))
  .filter(
    (x): x is { t: TrafficPoint; c: TrafficPoint } =>
      x.c !== undefined && x.t.elementBytes === 4 && x.t.fetchLimitBytes === null && x.t.footprintBytes === largest,
  );
if (errors.length > 0) {
  const patterns = [...new Set(errors.map((e) => `${e.t.pattern}/${e.t.target}`))];
  console.log(`timing fallback error vs counters (%, ${Math.round(largest / 4e6)}M floats)\n`);
  console.log(`| stride (floats) | ${patterns.join(' | ')} |`);
  console.log(`|---:|${patterns.map(() => '---:').join('|')}|`);
  for (const stride of strides) {
    const cells = patterns.map((k) => {
      const e = errors.find((x) => `${x.t.pattern}/${x.t.target}` === k && x.t.strideBytes === stride);
      return e ? ((Math.abs(e.t.totalBytes - e.c.totalBytes) / e.c.totalBytes) * 100).toFixed(1) : '';
    });
    console.log(`| ${stride / 4} | ${cells.join(' | ')} |`);
  }
}
