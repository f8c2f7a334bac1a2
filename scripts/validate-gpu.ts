/**
 * npm run validate:gpu [-- --runs 3 --reference FILE --backend native|sim --json FILE]
 *
 * A full discovery on the local GPU through the daemon as a user runs it
 * (server/main.ts on a fresh database, the first probe, then forced
 * re-probes over HTTP), printed as one table per run: element, attribute,
 * topod's value and confidence, the reference value, the deviation and a
 * verdict. References come from a Markdown file given with --reference (or
 * TOPOD_REFERENCE); without one the table has no reference column filled.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Command } from 'commander';
import { ResultStore } from '../server/store/results.js';
import type { ComputeTopology } from '../server/model/compute-schema.js';
import type { GpuTopologyDocument, RawSeries } from '../server/model/document.js';
import { compareToReference, renderTable } from './validate/compare.js';
import { parseBarrierReference, renderCompute, sameGpcMap } from './validate/compute.js';
import { renderL2Structure, samePartitionMap } from './validate/l2-structure.js';
import { renderTraffic } from './validate/traffic.js';
import { parseReference } from './validate/reference.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PROBE_TIMEOUT_MS = 600_000;

const options = new Command()
  .option('--runs <n>', 'consecutive discoveries (the first at start-up, then forced re-probes)', (v) => Number.parseInt(v, 10), 1)
  .option('--reference <file>', 'Markdown file of reference values', process.env.TOPOD_REFERENCE)
  .option('--backend <name>', 'native (the GPU) or sim', 'native')
  .option('--json <file>', 'also write every run’s rows and document here')
  .option('--raw <file>', 'also write every run’s raw series, as the daemon stored them (a fixture for re-analysis without the GPU)')
  .option('--traffic', 'after the runs, probe the L2 ↔ device-memory traffic too (opt-in, issue 20) and print it beside the paper’s A100')
  .parse()
  .opts<{ runs: number; reference?: string; backend: string; json?: string; raw?: string; traffic?: boolean }>();

const dir = mkdtempSync(path.join(tmpdir(), 'topod-validate-'));
const daemon = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'server/main.ts'), '--port', '0'], {
  cwd: root,
  env: { ...process.env, TOPOD_BACKEND: options.backend, TOPOD_DB: path.join(dir, 'topod.sqlite'), TOPOD_LOG_LEVEL: 'info' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const baseUrl = await new Promise<string>((resolve, reject) => {
  daemon.once('exit', (code) => reject(new Error(`the daemon exited (${code}) before listening`)));
  createInterface({ input: daemon.stdout! }).on('line', (line) => {
    try {
      const log = JSON.parse(line) as { msg?: string; address?: string };
      if (log.msg === 'topod listening' && log.address) resolve(log.address);
    } catch {
      // not a log line
    }
  });
});

try {
  const referenceText = options.reference && existsSync(options.reference) ? readFileSync(options.reference, 'utf8') : null;
  if (!referenceText) console.log(`no reference file (${options.reference ?? 'none given'}): values only`);
  const runs: unknown[] = [];
  const rawRuns: unknown[] = [];
  const computes: Array<ComputeTopology | undefined> = [];
  const l2s: Array<GpuTopologyDocument['elements']['l2']> = [];
  let lastResultId: number | undefined;
  for (let run = 1; run <= options.runs; run += 1) {
    if (run > 1) await post(`${baseUrl}/v1/gpus/0/probe`, { force: true });
    const started = Date.now();
    const document = await waitForResult(baseUrl, lastResultId);
    lastResultId = document.probe.resultId;
    const references = referenceText ? parseReference(referenceText, document.gpu.name) : [];
    const rows = compareToReference(document.elements, references);
    console.log(
      `\n## run ${run}: ${document.gpu.name} ${document.gpu.uuid}, driver ${document.probe.driverVersion}, probe ${document.probe.durationMs} ms (waited ${Date.now() - started} ms), analysis ${document.probe.analysisVersion}`,
    );
    if (document.carveout)
      console.log(
        `carveout: preferred shared ${document.carveout.preferredSharedPercent} %, block shared ${document.carveout.blockSharedBytes} B + reserve ${document.carveout.reservedSharedBytesPerBlock ?? '?'} B`,
      );
    console.log(renderTable(rows));
    for (const line of renderCompute(document.compute ?? undefined, referenceText ? parseBarrierReference(referenceText) : null))
      console.log(line);
    computes.push(document.compute ?? undefined);
    for (const line of renderL2Structure(document.elements.l2)) console.log(line);
    l2s.push(document.elements.l2);
    for (const warning of document.warnings) console.log(`warning: ${warning}`);
    runs.push({ run, rows, document });
    if (options.raw && document.probe.resultId !== undefined)
      rawRuns.push({ run, document, raw: storedRawSeries(document.probe.resultId) });
  }
  if (options.runs > 1) console.log(`\n${sameGpcMap(computes)}\n${samePartitionMap(l2s)}`);
  if (options.traffic) {
    await post(`${baseUrl}/v1/gpus/0/probe`, { force: true, only: ['traffic'] });
    const document = await waitForResult(baseUrl, lastResultId);
    console.log(`\n## traffic (probe ${document.probe.durationMs} ms)`);
    for (const line of renderTraffic(document.traffic)) console.log(line);
    runs.push({ run: 'traffic', rows: [], document });
    if (options.raw && document.probe.resultId !== undefined)
      rawRuns.push({ run: 'traffic', document, raw: storedRawSeries(document.probe.resultId) });
  }
  if (options.json) writeFileSync(options.json, JSON.stringify(runs, null, 1));
  if (options.raw)
    writeFileSync(
      options.raw,
      JSON.stringify({ recordedAt: new Date().toISOString(), command: process.argv.slice(1).join(' '), runs: rawRuns }),
    );
} finally {
  daemon.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}

/** The raw series the daemon stored with a result, read from its database beside it. */
function storedRawSeries(resultId: number): RawSeries[] {
  const db = new Database(path.join(dir, 'topod.sqlite'), { readonly: true });
  try {
    return new ResultStore(db).rawSeries(resultId);
  } finally {
    db.close();
  }
}

async function post(url: string, body: unknown): Promise<void> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (response.status !== 202) throw new Error(`POST ${url} answered ${response.status}: ${await response.text()}`);
}

/** The served topology once a result newer than `after` is stored and no probe is running. */
async function waitForResult(baseUrl: string, after: number | undefined): Promise<GpuTopologyDocument> {
  const deadline = Date.now() + PROBE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const response = await fetch(`${baseUrl}/v1/gpus/0/topology`);
    if (response.status === 200) {
      const document = (await response.json()) as GpuTopologyDocument;
      const fresh = document.probe.resultId !== undefined && document.probe.resultId !== after;
      if (fresh && document.status.activeJob === null) return document;
      if (document.status.probeStatus === 'failed') throw new Error(`the probe failed: ${JSON.stringify(document.status)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('no probe result within 10 minutes');
}
