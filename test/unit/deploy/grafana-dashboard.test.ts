/**
 * deploy/grafana/topod-dashboard.json: valid dashboard JSON whose every
 * PromQL query parses (Prometheus's own grammar; `promtool check rules`
 * where Debian's prometheus package is installed) and names only series and
 * labels topod's /metrics exposes — dcgm-exporter's series only in the
 * panels that join the two on(UUID, Hostname).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parser } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentTopology, mergedGpu, recordedH100Result } from '../../helpers/face-documents.js';
import { busyConditions } from '../faces/conditions-documents.js';
import { buildTestApp, type TestApp } from '../../integration/api/harness.js';

const DASHBOARD_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../deploy/grafana/topod-dashboard.json');
const PROMTOOL = spawnSync('promtool', ['--version']).status === 0;
/** dcgm-exporter's default counters the join panels read (its etc/default-counters.csv). */
const DCGM_EXPORTER_SERIES = new Set(['DCGM_FI_DEV_GPU_UTIL', 'DCGM_FI_DEV_FB_USED']);
/** Grafana's variables, replaced by values a query may take. */
const VARIABLES: Record<string, string> = { $__rate_interval: '1m', $__range: '1h', $__interval: '1m', $node: '.*', $gpu: '.*' };

interface Target {
  expr: string;
  refId: string;
  datasource?: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Target[];
  datasource?: { type: string; uid: string };
}
interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query: string | { query: string } }> };
}

const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;

const substitute = (expr: string): string => expr.replace(/\$[A-Za-z_]+/g, (name) => VARIABLES[name] ?? name);

/** Every PromQL query of the dashboard: the panels' and the selectors of the variables' label_values(). */
function queries(): Array<{ where: string; expr: string }> {
  const out: Array<{ where: string; expr: string }> = [];
  for (const panel of dashboard.panels)
    for (const target of panel.targets ?? []) out.push({ where: `${panel.title} ${target.refId}`, expr: substitute(target.expr) });
  for (const variable of dashboard.templating.list) {
    if (variable.type !== 'query') continue;
    const query = typeof variable.query === 'string' ? variable.query : variable.query.query;
    const selector = /^label_values\((.+),\s*[A-Za-z_]+\)$/.exec(query);
    expect(selector, `variable ${variable.name}: ${query}`).not.toBeNull();
    out.push({ where: `variable ${variable.name}`, expr: substitute(selector![1]!) });
  }
  return out;
}

/** The series names, label names and parse errors of one query, read with Prometheus's PromQL grammar. */
function read(expr: string): { series: string[]; labels: string[]; errors: number[] } {
  const series: string[] = [];
  const labels: string[] = [];
  const errors: number[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (node.type.isError) errors.push(node.from);
      if (node.name === 'LabelName') labels.push(expr.slice(node.from, node.to));
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') series.push(expr.slice(node.from, node.to));
    },
  });
  return { series, labels, errors };
}

describe('the Grafana dashboard', () => {
  let t: TestApp;
  let exposed: { series: Set<string>; labels: Set<string> };

  beforeAll(async () => {
    const result = recordedH100Result();
    t = await buildTestApp({
      topology: new DocumentTopology([mergedGpu({ ...result, conditions: busyConditions(result.gpu.uuid) }, 'h100-80gb-mig-mixed.json')]),
    });
    await t.app.inject({ method: 'GET', url: '/v1/gpus' });
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const series = new Set<string>();
    const labels = new Set<string>(['le']);
    for (const line of text.split('\n')) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) {
        series.add(type[1]!);
        if (type[2] === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) series.add(`${type[1]}${suffix}`);
      } else if (!line.startsWith('#')) for (const match of line.matchAll(/[{,]([A-Za-z_][A-Za-z0-9_]*)="/g)) labels.add(match[1]!);
    }
    exposed = { series, labels };
  });
  afterAll(async () => t?.app.close());

  it('is a dashboard: uid, title, schema version, panels with unique ids, a place and a Prometheus target each', () => {
    expect(dashboard.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    expect(dashboard.title).toContain('topod');
    expect(dashboard.schemaVersion).toBeGreaterThan(30);
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
      expect(panel.gridPos.w, panel.title).toBeGreaterThan(0);
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets!) expect(target.datasource, panel.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
    }
  });

  it('shows the node’s GPUs, MIG L2 shares, result age, probe jobs and the dcgm-exporter join', () => {
    const names = queries().flatMap(({ expr }) => read(expr).series);
    for (const series of [
      'topod_gpu_info',
      'topod_mig_l2_share_bytes',
      'topod_result_age_seconds',
      'topod_probe_jobs',
      'DCGM_FI_DEV_GPU_UTIL',
    ])
      expect(names).toContain(series);
  });

  it('every query parses and names only series and labels topod exposes (dcgm-exporter’s only where joined on UUID and Hostname)', () => {
    let checked = 0;
    for (const { where, expr } of queries()) {
      const { series, labels, errors } = read(expr);
      expect(errors, `${where}: ${expr}`).toEqual([]);
      expect(series.length, where).toBeGreaterThan(0);
      for (const name of series) {
        if (DCGM_EXPORTER_SERIES.has(name)) {
          expect(expr.replace(/\s+/g, ''), `${where} joins dcgm-exporter's ${name}`).toMatch(/on\(UUID,Hostname[,)]/);
          expect(
            series.some((s) => exposed.series.has(s)),
            where,
          ).toBe(true);
        } else expect(exposed.series.has(name), `${where}: ${name} is not a series topod exports`).toBe(true);
      }
      for (const label of labels) expect(exposed.labels.has(label), `${where}: label ${label}`).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThan(10);
  });

  it.skipIf(!PROMTOOL)('every query passes `promtool check rules` (Debian package prometheus)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'topod-grafana-'));
    try {
      const rules = {
        groups: [{ name: 'topod-dashboard', rules: queries().map(({ expr }, i) => ({ record: `topod_dashboard:query_${i}`, expr })) }],
      };
      const file = path.join(dir, 'rules.yml');
      writeFileSync(file, JSON.stringify(rules, null, 2));
      const run = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
      expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(PROMTOOL)(
    'promtool check rules: skipped — promtool not installed (apt-get install prometheus; .ci/run installs it); the PromQL grammar check above still ran',
    () => {
      expect(PROMTOOL).toBe(false);
    },
  );
});
