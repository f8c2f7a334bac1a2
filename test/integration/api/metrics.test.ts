/**
 * GET /metrics: every measured attribute of the served document appears as a
 * series with dcgm-exporter's labels, MIG instances carry their L2 share,
 * series of a destroyed MIG instance disappear, probe jobs, NVML polls and
 * HTTP requests are counted — and Debian's promtool accepts the exposition.
 */
import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import type { DynamicSnapshot } from '../../../server/dynamic/types.js';
import { elementEntries, latencyAttributes, measuredAttributes } from '../../../server/faces/documents.js';
import { GPU_LABELS, profileLabel, type PollSource } from '../../../server/faces/metrics.js';
import { UNAVAILABLE_SNAPSHOT } from '../../../server/dynamic/types.js';
import { DocumentTopology, mergedGpu, recordedH100Result, simulatedH100Result } from '../../helpers/face-documents.js';
import { WHOLE_DISCOVERY_TIMEOUT_MS } from '../../helpers/simulated-discovery.js';

/** One series as dcgm-exporter 4.x writes it (its labels and their order; the values are made up). */
const DCGM_EXPORTER_SERIES =
  'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-00000000-0000-0000-0000-000000000000",pci_bus_id="00000000:8D:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-1",DCGM_FI_DRIVER_VERSION="580.95.05"} 0';

const labelNames = (line: string): string[] =>
  [...line.slice(line.indexOf('{') + 1, line.lastIndexOf('}')).matchAll(/([A-Za-z_][A-Za-z0-9_]*)="(?:[^"\\]|\\.)*"/g)].map((m) => m[1]!);
import { makeJob } from './fake-topology.js';
import { buildTestApp, type TestApp } from './harness.js';

const PROMTOOL = spawnSync('promtool', ['--version']).status === 0;

/** The value of the one sample whose name and labels match (label subset). */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

const UNIT_SUFFIX: Record<string, { suffix: string; scale: number }> = {
  bytes: { suffix: 'bytes', scale: 1 },
  cycles: { suffix: 'cycles', scale: 1 },
  ns: { suffix: 'seconds', scale: 1e-9 },
  'bytes/s': { suffix: 'bytes_per_second', scale: 1 },
  count: { suffix: 'instances', scale: 1 },
  hz: { suffix: 'hertz', scale: 1 },
};

describe('GET /metrics', () => {
  let t: TestApp | undefined;
  afterEach(async () => t?.app.close());

  const scrape = async () => {
    const res = await t!.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.body;
  };

  it('exposes every measured attribute of the document, with dcgm-exporter labels', async () => {
    const gpu = mergedGpu(recordedH100Result(), 'h100-80gb-mig-mixed.json');
    t = await buildTestApp({ topology: new DocumentTopology([gpu]) });
    const text = await scrape();
    const labels = {
      gpu: '0',
      UUID: gpu.summary.uuid,
      modelName: gpu.summary.name,
      device: 'nvidia0',
      Hostname: hostname(),
      DCGM_FI_DRIVER_VERSION: gpu.summary.driverVersion,
    };
    let checked = 0;
    for (const [element, topology] of elementEntries(gpu.merged)) {
      for (const [attribute, value] of measuredAttributes(topology)) {
        const unit = UNIT_SUFFIX[value.unit]!;
        expect(sample(text, `topod_element_${unit.suffix}`, { ...labels, element, attribute }), `${element}.${attribute}`).toBeCloseTo(
          value.value * unit.scale,
          6,
        );
        checked++;
      }
      for (const [attribute, latency] of latencyAttributes(topology)) {
        expect(sample(text, 'topod_element_latency_cycles', { ...labels, element, attribute, statistic: 'p50' })).toBe(latency.p50);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(5);
    expect(sample(text, 'topod_result_stale', labels)).toBe(0);
    expect(sample(text, 'topod_result_age_seconds', labels)).toBeGreaterThan(0);
  });

  it('gives each MIG GPU instance its L2 share, and drops the series when the instance is gone', async () => {
    const result = recordedH100Result();
    const gpu = mergedGpu(result, 'h100-80gb-mig-mixed.json');
    const topology = new DocumentTopology([gpu]);
    t = await buildTestApp({ topology });
    const mig = gpu.merged.mig;
    expect(mig?.instances.length).toBeGreaterThan(1);
    const text = await scrape();
    for (const instance of mig!.instances) {
      const labels = { GPU_I_ID: String(instance.gpuInstanceId), GPU_I_PROFILE: profileLabel(instance.profileName) };
      expect(instance.l2.bytes).not.toBeNull();
      expect(sample(text, 'topod_mig_l2_share_bytes', labels)).toBe(instance.l2.bytes);
      expect(sample(text, 'topod_mig_memory_slices', labels)).toBe(instance.l2.memorySlices);
    }
    // MIG turned off: the instances' series vanish at the next scrape (no stale series as dcgm-exporter leaves).
    topology.add(mergedGpu(result, 'h100-80gb-mig-off.json'));
    const after = await scrape();
    expect(after).not.toMatch(/^topod_mig_l2_share_bytes\{/m);
    expect(after).toMatch(/^topod_mig_profile_l2_share_bytes\{/m);
  });

  it('drops every series of a GPU that is gone, says it is absent, and leaves its index to the GPU now in its slot', async () => {
    const result = recordedH100Result();
    const goneUuid = 'GPU-0ld00000-1111-2222-3333-444444444444';
    const gone = mergedGpu(result, null, 0, { uuid: goneUuid, name: 'NVIDIA A100-SXM4-40GB', present: false });
    const present = mergedGpu(result, null, 0);
    t = await buildTestApp({ topology: new DocumentTopology([gone, present]) });
    const text = await scrape();
    const goneLines = text.split('\n').filter((line) => line.includes(goneUuid));
    expect(goneLines).toEqual([expect.stringMatching(/^topod_gpu_present\{.*\} 0$/)]);
    expect(sample(text, 'topod_gpu_present', { UUID: goneUuid, gpu: '', device: '' })).toBe(0);
    // gpu="0" is one GPU's label: every series carrying it names the present GPU's UUID.
    const indexZero = text.split('\n').filter((line) => line.includes('gpu="0"'));
    expect(indexZero.length).toBeGreaterThan(5);
    expect(indexZero.every((line) => line.includes(`UUID="${present.summary.uuid}"`))).toBe(true);
  });

  it('counts finished probe jobs with their durations, NVML polls and HTTP requests', async () => {
    const poller = new EventEmitter() as EventEmitter & PollSource & { lastReadDurationMs: number | null };
    poller.lastReadDurationMs = 3;
    const topology = new DocumentTopology([mergedGpu(recordedH100Result(), null)]);
    const { buildApp } = await import('../../../server/app.js');
    const app = await buildApp({ config: { adminToken: null, bodyLimitBytes: 16384 }, topology, version: 't', nvmlPoller: poller });
    t = { app, topology, logs: [] };
    const job = makeJob({ state: 'succeeded', startedAt: '2025-01-01T00:00:00.000Z', finishedAt: '2025-01-01T00:00:42.000Z' });
    topology.emit({ type: 'probe.succeeded', gpuUuid: job.gpuUuid, job, at: job.finishedAt! });
    const snapshot: DynamicSnapshot = { ...UNAVAILABLE_SNAPSHOT('x'), available: true };
    poller.emit('snapshot', snapshot);
    poller.emit('snapshot', UNAVAILABLE_SNAPSHOT('driver gone'));
    await app.inject({ method: 'GET', url: '/v1/gpus' });
    const text = await scrape();
    expect(sample(text, 'topod_probe_jobs_finished_total', { state: 'succeeded' })).toBe(1);
    expect(sample(text, 'topod_probe_job_duration_seconds_sum', { state: 'succeeded' })).toBe(42);
    expect(sample(text, 'topod_nvml_poll_duration_seconds_count', {})).toBe(2);
    expect(sample(text, 'topod_nvml_poll_failures_total', {})).toBe(1);
    expect(sample(text, 'topod_http_request_duration_seconds_count', { route: '/v1/gpus', method: 'GET', status_code: '200' })).toBe(1);
    // Unknown paths share one label value: the cardinality stays bounded whatever clients ask.
    await app.inject({ method: 'GET', url: '/no/such/path/123' });
    await app.inject({ method: 'GET', url: '/no/such/path/456' });
    expect(sample(await scrape(), 'topod_http_request_duration_seconds_count', { route: 'unmatched', status_code: '404' })).toBe(2);
  });

  it('carries dcgm-exporter’s labels, in its order, so on(UUID, Hostname) joins the two', async () => {
    const gpu = mergedGpu(recordedH100Result(), 'h100-80gb-mig-mixed.json');
    const topology = new DocumentTopology([gpu]);
    const { buildApp } = await import('../../../server/app.js');
    const app = await buildApp({ config: { adminToken: null, bodyLimitBytes: 16384 }, topology, version: 't' });
    t = { app, topology, logs: [] };
    const text = await scrape();
    const dcgmLabels = labelNames(DCGM_EXPORTER_SERIES);
    expect(GPU_LABELS).toEqual(dcgmLabels);
    const l2Size = text
      .split('\n')
      .find((line) => line.startsWith('topod_element_bytes{') && line.includes('element="l2"') && line.includes('attribute="size"'))!;
    expect(labelNames(l2Size).slice(0, dcgmLabels.length)).toEqual(dcgmLabels);
    expect(l2Size).toContain(`Hostname="${hostname()}"`);
    expect(l2Size).toContain(`DCGM_FI_DRIVER_VERSION="${gpu.summary.driverVersion}"`);
    // MIG series: dcgm-exporter's labels and its GPU_I_ID, GPU_I_PROFILE.
    const share = text.split('\n').find((line) => line.startsWith('topod_mig_l2_share_bytes{'))!;
    expect(labelNames(share)).toEqual([...dcgmLabels, 'GPU_I_ID', 'GPU_I_PROFILE']);
  });

  it(
    'names each family with its unit, writes no family without samples, and keeps a bound apart from values',
    async () => {
      const gpu = mergedGpu(await simulatedH100Result(), 'h100-80gb-mig-mixed.json');
      t = await buildTestApp({ topology: new DocumentTopology([gpu]) });
      const text = await scrape();
      const lines = text.split('\n');
      // Element families follow the units the documents carry (the conditions' and MIG families stay, empty, where there is none).
      for (const type of lines.filter((line) => line.startsWith('# TYPE topod_element_'))) {
        const name = type.split(' ')[2]!;
        expect(
          lines.some((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `)),
          `${name} has samples`,
        ).toBe(true);
      }
      expect(text).not.toMatch(/^# (HELP|TYPE) topod_element_amount /m);
      expect(text).not.toMatch(/nanoseconds/);
      // How many of an element there are: per SM or per GPU.
      const l1 = gpu.merged.elements.l1!.amount!;
      expect(sample(text, 'topod_element_instances', { element: 'l1', attribute: 'amount', per: l1.per })).toBe(l1.value);
      // The constant L1.5 is known as "at least 64 KiB": a bound series, never a size with confidence 1.
      const l15 = gpu.merged.elements.constantL15!.size!;
      expect(l15.bound).toBe('lower');
      expect(sample(text, 'topod_element_bound_bytes', { element: 'constantL15', attribute: 'size', bound: 'lower' })).toBe(l15.value);
      expect(sample(text, 'topod_element_bytes', { element: 'constantL15', attribute: 'size' })).toBeUndefined();
      expect(sample(text, 'topod_element_confidence_ratio', { element: 'constantL15', attribute: 'size' })).toBeUndefined();
      // A family leaves with its last series: no bound is left once the GPU is served without one.
      const { constantL15: _bound, ...rest } = gpu.merged.elements;
      (t.topology as DocumentTopology).add({ ...gpu, merged: { ...gpu.merged, elements: rest } });
      expect(await scrape()).not.toMatch(/topod_element_bound_bytes/);
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );

  it.skipIf(!PROMTOOL)('passes `promtool check metrics` (Debian package prometheus)', async () => {
    t = await buildTestApp({ topology: new DocumentTopology([mergedGpu(recordedH100Result(), 'h100-80gb-mig-mixed.json')]) });
    await t.app.inject({ method: 'GET', url: '/v1/gpus' });
    const text = await scrape();
    // Exit 1: the exposition does not parse; 3: it parses, with lint problems (listed on stderr/stdout).
    const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    const problems = `${run.stdout}${run.stderr}`.split('\n').filter((line) => line.trim() !== '');
    expect(run.status, problems.join('\n')).not.toBe(1);
    // The only lint promtool may raise is on dcgm-exporter's own camelCase label names (UUID, modelName, GPU_I_ID),
    // kept so that dashboards written for dcgm-exporter join on them; anything else fails.
    const other = problems.filter((line) => !line.endsWith("label names should be written in 'snake_case' not 'camelCase'"));
    expect(other).toEqual([]);
    expect(run.status === 0 || run.status === 3).toBe(true);
  });

  it.skipIf(PROMTOOL)('promtool check metrics: skipped — promtool not installed (apt-get install prometheus; .ci/run installs it)', () => {
    expect(PROMTOOL).toBe(false);
  });
});
