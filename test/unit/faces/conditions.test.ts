/**
 * The faces show the conditions a result was measured under (issue 17): the
 * metrics as series with the GPU's dcgm-exporter labels (and a waiting job in
 * the jobs gauge), the picture's footer in one line, the MT4G export's `meta`.
 * A document without conditions (stored before they were recorded) shows none.
 */
import { spawnSync } from 'node:child_process';
import { Resvg } from '@resvg/resvg-js';
import { describe, expect, it } from 'vitest';
import { conditionsLine } from '../../../server/faces/conditions.js';
import { TopodMetrics } from '../../../server/faces/metrics.js';
import { MT4G_CONDITIONS_KEY, mt4gResult } from '../../../server/faces/mt4g-export.js';
import { escapeXml, topologySvg } from '../../../server/faces/svg.js';
import type { ResultDocument } from '../../../server/model/document.js';
import { DocumentTopology, mergedGpu, recordedH100Result } from '../../helpers/face-documents.js';
import { makeGpu } from '../../integration/api/fake-topology.js';
import { busyConditions, idleConditions, unknownConditions, withConditions } from './conditions-documents.js';

const PROMTOOL = spawnSync('promtool', ['--version']).status === 0;
const result = recordedH100Result();
const UUID = result.gpu.uuid;

/** The value of the one sample whose name and labels match (label subset). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

async function scrape(document: ResultDocument, topology = new DocumentTopology([mergedGpu(document, null)])): Promise<string> {
  const metrics = new TopodMetrics({ topology });
  try {
    return await metrics.render();
  } finally {
    metrics.close();
  }
}

describe('conditionsLine', () => {
  it('a busy GPU: the other processes, clocks, temperature and what held the clocks back, as a warning', () => {
    expect(conditionsLine(busyConditions(UUID))).toEqual({
      text: 'measured on a busy GPU: 1 other process (2.25 GiB) · SM 1755–1980 MHz · 61–63 °C · clocks held back: sw-power-cap',
      busy: true,
    });
  });

  it('an idle GPU: no warning, one figure where both ends agree, gpu-idle not a reason', () => {
    expect(conditionsLine(idleConditions(UUID))).toEqual({ text: 'idle GPU · SM 1755–1980 MHz · 61–63 °C', busy: false });
    expect(
      conditionsLine({ ...idleConditions(UUID), smClockMHz: { min: 1980, max: 1980 }, temperatureC: { start: 40, end: null } }).text,
    ).toBe('idle GPU · SM 1980 MHz · 40 °C');
  });

  it('busy with no process NVML could list: the reason it gave', () => {
    const conditions = { ...busyConditions(UUID), otherProcesses: [] };
    expect(conditionsLine(conditions).text).toMatch(/^measured on a busy GPU: 1 compute process \(2\.25 GiB\), 100 % utilization · /);
  });

  it('no NVML: says the conditions are unknown and why', () => {
    expect(conditionsLine(unknownConditions())).toEqual({ text: 'conditions unknown: activity unknown: NVML is not loaded', busy: false });
  });
});

describe('metrics of the conditions', () => {
  const labels = { UUID, gpu: '0', device: 'nvidia0' };

  it('a result measured on a busy GPU: busy 1, the process count, clocks in hertz, temperature, power, clocks event reasons', async () => {
    const text = await scrape(withConditions(result, busyConditions(UUID)));
    expect(sample(text, 'topod_probe_conditions_busy', labels)).toBe(1);
    expect(sample(text, 'topod_probe_other_processes', labels)).toBe(1);
    expect(sample(text, 'topod_probe_sm_clock_hertz', { ...labels, bound: 'min' })).toBe(1755e6);
    expect(sample(text, 'topod_probe_sm_clock_hertz', { ...labels, bound: 'max' })).toBe(1980e6);
    expect(sample(text, 'topod_probe_sm_clock_limit_hertz', labels)).toBe(1980e6);
    expect(sample(text, 'topod_probe_temperature_celsius', { ...labels, at: 'start' })).toBe(61);
    expect(sample(text, 'topod_probe_temperature_celsius', { ...labels, at: 'end' })).toBe(63);
    expect(sample(text, 'topod_probe_power_watts', { ...labels, at: 'start' })).toBe(612);
    expect(sample(text, 'topod_probe_clocks_event_reason', { ...labels, reason: 'sw-power-cap' })).toBe(1);
    expect(sample(text, 'topod_probe_persistence_mode', labels)).toBe(1);
    expect(sample(text, 'topod_probe_ecc_mode', labels)).toBe(1);
    expect(text).toMatch(/^# TYPE topod_probe_sm_clock_hertz gauge$/m);
    expect(text).toMatch(/^# HELP topod_probe_conditions_busy 1 when the served result was measured while other processes used the GPU/m);
  });

  it('an idle GPU: busy 0, no processes, no reason series', async () => {
    const text = await scrape(withConditions(result, idleConditions(UUID)));
    expect(sample(text, 'topod_probe_conditions_busy', labels)).toBe(0);
    expect(sample(text, 'topod_probe_other_processes', labels)).toBe(0);
    expect(text).not.toMatch(/^topod_probe_clocks_event_reason\{/m);
  });

  it('no series for a result without conditions, or whose conditions are unknown (no NVML)', async () => {
    for (const document of [result, withConditions(result, unknownConditions())]) {
      const text = await scrape(document);
      expect(text).not.toMatch(/^topod_probe_(conditions_busy|other_processes|sm_clock_hertz|temperature_celsius|power_watts)\{/m);
    }
  });

  it('the series follow the served result: a new result measured on an idle GPU drops the busy one’s reasons', async () => {
    const topology = new DocumentTopology([mergedGpu(withConditions(result, busyConditions(UUID)), null)]);
    const metrics = new TopodMetrics({ topology });
    try {
      expect(sample(await metrics.render(), 'topod_probe_clocks_event_reason', { reason: 'sw-power-cap' })).toBe(1);
      topology.add(mergedGpu(withConditions(result, idleConditions(UUID)), null));
      const after = await metrics.render();
      expect(sample(after, 'topod_probe_conditions_busy', labels)).toBe(0);
      expect(after).not.toMatch(/^topod_probe_clocks_event_reason\{/m);
    } finally {
      metrics.close();
    }
  });

  it('the probe jobs gauge counts a job waiting for its busy GPU', async () => {
    const topology = new DocumentTopology([mergedGpu(result, null)]);
    const waiting = makeGpu({
      index: 1,
      probe: { status: 'waiting', stale: false, staleReason: null, lastResultAt: null, activeJobId: 'job-w' },
    });
    topology.gpus = [...topology.gpus, waiting];
    const text = await scrape(result, topology);
    expect(sample(text, 'topod_probe_jobs', { state: 'waiting' })).toBe(1);
    expect(sample(text, 'topod_probe_jobs', { state: 'queued' })).toBe(0);
    expect(sample(text, 'topod_probe_jobs', { state: 'running' })).toBe(0);
    expect(sample(text, 'topod_gpu_info', { gpu: '1', probe_status: 'waiting' })).toBe(1);
  });

  it.skipIf(!PROMTOOL)('passes `promtool check metrics` with every conditions series', async () => {
    const text = await scrape(withConditions(result, busyConditions(UUID)));
    expect(text).toMatch(/^topod_probe_clocks_event_reason\{/m);
    const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    const problems = `${run.stdout}${run.stderr}`.split('\n').filter((line) => line.trim() !== '');
    expect(run.status, problems.join('\n')).not.toBe(1);
    // As in test/integration/api/metrics.test.ts: only dcgm-exporter's camelCase label names may be flagged.
    expect(problems.filter((line) => !line.endsWith("label names should be written in 'snake_case' not 'camelCase'"))).toEqual([]);
  });

  it.skipIf(PROMTOOL)('promtool check metrics: skipped — promtool not installed (apt-get install prometheus; .ci/run installs it)', () => {
    expect(PROMTOOL).toBe(false);
  });
});

describe('the picture’s footer', () => {
  const svgOf = (document: ResultDocument) => topologySvg(mergedGpu(document, 'h100-80gb-mig-mixed.json').merged);

  it('a busy GPU: one line in the warning colour, and the picture still renders', () => {
    const svg = svgOf(withConditions(result, busyConditions(UUID)));
    const footer = svg.split('\n').find((line) => line.includes('class="conditions busy"'));
    expect(footer).toContain(escapeXml(`⚠ ${conditionsLine(busyConditions(UUID)).text}`));
    expect(footer).toContain('fill="#b3261e"');
    const image = new Resvg(svg, { font: { loadSystemFonts: true } }).render();
    expect(image.width).toBe(960);
  });

  it('an idle GPU: the line without a warning; no conditions: no footer and the same picture as before', () => {
    const idle = svgOf(withConditions(result, idleConditions(UUID)));
    expect(idle).toContain(`class="conditions" fill="#555555">${escapeXml('idle GPU · SM 1755–1980 MHz · 61–63 °C')}</text>`);
    const none = svgOf(result);
    expect(none).not.toContain('class="conditions');
    // The footer only adds its line: everything above it is drawn as without conditions.
    const body = (svg: string) =>
      svg.split('\n').filter((line) => !line.includes('class="conditions') && !/^<svg |^<rect x="8" y="8"/.test(line));
    expect(body(idle)).toEqual(body(none));
  });
});

/** MT4G's own meta keys (caps-tum/mt4g v1.2.0 src/main.cpp). */
const MT4G_META_KEYS = ['driver', 'gpuCompiler', 'hostCompiler', 'hostCpu', 'os', 'runtime', 'timestamp'] as const;

describe('the MT4G export’s meta', () => {
  it('carries the conditions as meta.topodConditions beside MT4G’s own keys', () => {
    const conditions = busyConditions(UUID);
    const exported = mt4gResult(mergedGpu(withConditions(result, conditions), 'h100-80gb-mig-mixed.json').merged) as Record<string, any>;
    expect(Object.keys(exported['meta'])).toEqual([...MT4G_META_KEYS, MT4G_CONDITIONS_KEY].sort());
    expect(exported['meta'][MT4G_CONDITIONS_KEY]).toEqual(conditions);
    expect(Object.keys(exported['meta'][MT4G_CONDITIONS_KEY])).toEqual(Object.keys(conditions).sort());
  });

  it('a document without conditions keeps MT4G’s meta as it was', () => {
    const exported = mt4gResult(mergedGpu(result, null).merged) as Record<string, any>;
    expect(Object.keys(exported['meta'])).toEqual([...MT4G_META_KEYS].sort());
  });
});
