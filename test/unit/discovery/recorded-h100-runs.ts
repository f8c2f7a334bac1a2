/**
 * Every discovery recorded on an H100 whose raw series are kept under
 * test/fixtures/h100 (the multi-run .json.gz files, the daemon's first probe
 * and the early single-placement run), read as plain raw series, plus one
 * full discovery per run index composed of them. No single recording holds
 * every strategy's series (each fixture was recorded for one issue), so a
 * composed run takes each strategy's series from the recording made for it:
 * the memory levels from discovery-3-runs, sharing from sharing-farnear,
 * bandwidth from discovery-ii, the GPC map from compute-3-runs and the L2
 * partitions from l2-structure (hello and calibrate from discovery-3-runs).
 * The boards differ between recordings; the analysis's cost does not care.
 * Shared by the analysis golden test and `npm run bench:analysis`.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import type { RawSeries } from '../../../server/model/document.js';

export interface RecordedRun {
  /** Stable: names the run in the golden fixture. */
  label: string;
  raw: RawSeries[];
}

const FIXTURES = new URL('../../fixtures/h100/', import.meta.url);
const MULTI_RUN_FILES = [
  'discovery-3-runs',
  'discovery-ii-3-runs',
  'l2-structure-3-runs',
  'sharing-farnear-3-runs',
  'compute-3-runs',
] as const;
type MultiRunFile = (typeof MULTI_RUN_FILES)[number];

function readJson(url: URL): unknown {
  const bytes = readFileSync(url);
  return JSON.parse((url.pathname.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8'));
}

function multiRuns(file: MultiRunFile): RawSeries[][] {
  const recorded = readJson(new URL(`${file}.json.gz`, FIXTURES)) as { runs: Array<{ raw: RawSeries[] }> };
  return recorded.runs.map((run) => run.raw);
}

const under =
  (...prefixes: string[]) =>
  (series: RawSeries) =>
    prefixes.some((prefix) => series.name === prefix || series.name.startsWith(`${prefix}.`));

/** Run `index` of every multi-run recording, one strategy's series from each: a full discovery's raw series. */
function composedRun(runs: Record<MultiRunFile, RawSeries[][]>, index: number): RawSeries[] {
  const from = (file: MultiRunFile, keep: (series: RawSeries) => boolean) => (runs[file][index] ?? []).filter(keep);
  return [
    ...from('discovery-3-runs', under('hello', 'calibrate', 'l1', 'texture', 'readonly', 'constant', 'shared', 'l2')),
    ...from('sharing-farnear-3-runs', under('sharing')),
    ...from('discovery-ii-3-runs', under('bandwidth')),
    ...from('compute-3-runs', under('compute')),
    ...from('l2-structure-3-runs', under('l2-partition')),
  ];
}

/** Full discoveries composed per run index (three): what one H100 discovery's analysis works through. */
export function composedFullDiscoveries(): RecordedRun[] {
  const runs = Object.fromEntries(MULTI_RUN_FILES.map((file) => [file, multiRuns(file)])) as Record<MultiRunFile, RawSeries[][]>;
  return [0, 1, 2].map((index) => ({ label: `full discovery ${index + 1} (composed)`, raw: composedRun(runs, index) }));
}

/** Every recorded H100 run as it was recorded, then the composed full discoveries. */
export function recordedH100Runs(): RecordedRun[] {
  const recorded: RecordedRun[] = MULTI_RUN_FILES.flatMap((file) =>
    multiRuns(file).map((raw, index) => ({ label: `${file} run ${index + 1}`, raw })),
  );
  recorded.push({ label: 'discovery-run', raw: (readJson(new URL('discovery-run.json', FIXTURES)) as { raw: RawSeries[] }).raw });
  recorded.push({
    label: 'h100-80gb-hbm3-l1-l2-run',
    raw: (readJson(new URL('./fixtures/h100-80gb-hbm3-l1-l2-run.json.gz', import.meta.url)) as { raw: RawSeries[] }).raw,
  });
  return [...recorded, ...composedFullDiscoveries()];
}
