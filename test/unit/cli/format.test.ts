import { describe, expect, it } from 'vitest';
import { fitText } from '../../../server/cli/fit-text.js';
import { gpuTable, jobPhaseText, jobTable, parseSize, sizeText, table, topologyTable } from '../../../server/cli/format.js';
import { conditionsLine } from '../../../server/faces/conditions.js';
import { elementLabel, formatBytes } from '../../../server/faces/documents.js';
import { fitAdvice } from '../../../server/faces/fit.js';
import type { ElementTopology } from '../../../server/model/document.js';
import type { MigDeviceSummary } from '../../../server/model/gpu.js';
import { mergeMigInstance } from '../../../server/topology/merge.js';
import { mergedGpu, recordedH100Result } from '../../helpers/face-documents.js';
import { makeGpu, makeJob } from '../../integration/api/fake-topology.js';
import { busyConditions, idleConditions } from '../faces/conditions-documents.js';

const withMig = mergedGpu(recordedH100Result(), 'h100-80gb-mig-mixed.json');
const withoutNvml = mergedGpu(recordedH100Result(), null);

describe('parseSize', () => {
  it.each([
    ['1048576', 1_048_576],
    ['24MiB', 24 * 1024 ** 2],
    ['512 KiB', 512 * 1024],
    ['40gb', 40e9],
    ['1e6', 1e6],
    ['1.5 GiB', 1.5 * 1024 ** 3],
  ])('reads %s', (text, bytes) => expect(parseSize(text)).toBe(bytes));

  it.each(['lots', '12 parsecs', '-4', ''])('refuses %j, saying what it takes', (text) =>
    expect(() => parseSize(text)).toThrow(/is not a size: write bytes or a number with KiB/),
  );
});

describe('fitText', () => {
  it('shows every profile with the numbers the advice used, and the summary', () => {
    const advice = fitAdvice(withMig.merged, 24 * 1024 ** 2);
    const text = fitText(advice);
    expect(text.split('\n')[0]).toContain('working set 24 MiB');
    for (const profile of advice.profiles) expect(text).toContain(profile.name);
    expect(text).toContain(advice.summary);
    expect(text).toMatch(/\byes\b|\bno\b/);
  });

  it('says what it does not know: no NVML (no profiles, no memory slices), no measured segment', () => {
    const document = structuredClone(withoutNvml.merged);
    delete (document.elements.l2 as ElementTopology).segmentSize;
    const text = fitText(fitAdvice(document, 1024));
    expect(text).toContain('segment not measured');
    expect(text).toContain('? memory slices');
  });
});

describe('tables', () => {
  it('topology: one row per element with its size, latency, line and fetch; a MIG instance says whose it is', () => {
    const text = topologyTable(withMig.merged);
    for (const name of Object.keys(withMig.merged.elements)) expect(text).toContain(elementLabel(name));
    expect(text.split('\n')[0]).toContain(withMig.merged.gpu.uuid);
    const instance = mergeMigInstance(withMig.merged, withMig.migUuids[0]!);
    expect(instance).not.toBeNull();
    expect(topologyTable(instance!).split('\n')[0]).toContain(`(MIG instance of ${withMig.merged.gpu.name})`);
  });

  it('the L2 as partitions: "2 partitions of 25 MiB", the whole split by the count, never "50 MiB × 2"', () => {
    const l2 = withoutNvml.merged.elements.l2 as ElementTopology;
    const partitions = l2.amount!.value;
    expect(l2.amount!.per).toBe('gpu');
    expect(partitions).toBeGreaterThan(1);
    const expected = `${partitions} partitions of ${formatBytes(l2.size!.value / partitions)}`;
    expect(sizeText(l2)).toBe(expected);
    const row = topologyTable(withoutNvml.merged)
      .split('\n')
      .find((line) => line.startsWith('L2 '));
    expect(row).toContain(expected);
    expect(row).not.toContain('×');
  });

  it('sizes per SM, bounds and counts alone read as written', () => {
    const size = { value: 65536, unit: 'bytes' as const, source: 'microbenchmark' as const, confidence: 0.9 };
    expect(sizeText({ size, amount: { value: 1, unit: 'count', source: 'derived', per: 'sm' } })).toBe('64 KiB per SM');
    expect(sizeText({ size, amount: { value: 4, unit: 'count', source: 'derived', per: 'sm' } })).toBe('4 × 64 KiB per SM');
    expect(sizeText({ size: { ...size, bound: 'lower' } })).toBe('≥ 64 KiB');
    expect(sizeText({ size, amount: { value: 1, unit: 'count', source: 'derived', per: 'gpu' } })).toBe('64 KiB');
    expect(sizeText({ amount: { value: 2, unit: 'count', source: 'derived', per: 'sm' } })).toBe('2 per SM');
    expect(sizeText({})).toBe('');
  });

  it('without headers: only the rows (no title, heading, rule or footer); wide: more columns', () => {
    expect(table(['a', 'bb'], [['1', '2']], false)).toBe('1  2');
    const rows = topologyTable(
      { ...withoutNvml.merged, conditions: busyConditions(withoutNvml.merged.gpu.uuid) },
      { wide: false, headers: false },
    ).split('\n');
    expect(rows).toHaveLength(Object.keys(withoutNvml.merged.elements).length);
    expect(rows[0]).toMatch(/^L1\s/);
    const wide = topologyTable(withoutNvml.merged, { wide: true, headers: true }).split('\n');
    expect(wide[1]).toMatch(
      /^element\s+size\s+latency\s+p50\/p95\s+line\s+fetch\s+bandwidth\s+one SM reaches\s+miss penalty\s+confidence\s+sources$/,
    );
    const l2 = withoutNvml.merged.elements.l2 as ElementTopology;
    expect(wide.find((line) => line.startsWith('L2 '))).toContain(formatBytes(l2.segmentSize!.value));
    const jobs = jobTable([makeJob({ id: 'job-x', only: ['l1'] })], { wide: true, headers: false });
    expect(jobs.split('\n')).toHaveLength(1);
    expect(jobs).toMatch(/^job-x .* requested +api:127\.0\.0\.1 +l1 /);
  });

  it('GPUs with their MIG devices as nvidia-smi -L lists them; wide adds SMs, memory and L2 share', () => {
    const uuids = ['MIG-aaaa', 'MIG-bbbb', 'MIG-gone'];
    const gpu = makeGpu({ index: 1, uuid: 'GPU-1', migDeviceUuids: uuids });
    const device = (uuid: string, profileName: string): MigDeviceSummary => ({
      kind: 'mig-device',
      uuid,
      parent: { uuid: 'GPU-1', index: 1, name: gpu.name },
      gpuInstanceId: 1,
      computeInstanceId: 0,
      profileId: 9,
      profileName,
      placement: { start: 0, size: 4 },
      multiprocessorCount: 60,
      memorySizeBytes: 40 * 1024 ** 3,
      l2: { bytes: 25 * 1024 ** 2, memorySlices: 4, source: 'nvml', reachablePerSmBytes: null, partitions: null },
      simulated: true,
    });
    const migDevices = new Map<string, MigDeviceSummary | null>([
      ['MIG-aaaa', device('MIG-aaaa', 'MIG 3g.40gb')],
      ['MIG-bbbb', device('MIG-bbbb', '1g.10gb')],
    ]);
    const lines = gpuTable([gpu], migDevices).split('\n');
    expect(lines).toHaveLength(2 + 1 + uuids.length);
    expect(lines[3]).toMatch(/^1:0 +MIG-aaaa +MIG 3g\.40gb Device 0 /);
    expect(lines[4]).toMatch(/^1:1 +MIG-bbbb +MIG 1g\.10gb Device 1 /);
    expect(lines[5]).toMatch(/^1:2 +MIG-gone +MIG \? Device 2 /);
    const wide = gpuTable([gpu], migDevices, { wide: true, headers: false }).split('\n');
    expect(wide).toHaveLength(4);
    expect(wide[1]).toMatch(/ 60 +40 GiB +25 MiB \(nvml\)$/);
    expect(wide[0]).toContain(gpu.driverVersion);
  });

  it('GPUs and jobs, one row each', () => {
    const gpus = gpuTable([makeGpu({ index: 0, simulated: true }), makeGpu({ index: 1, uuid: 'GPU-2', present: false })]);
    expect(gpus.split('\n')).toHaveLength(4);
    expect(gpus).toContain('(sim)');
    const jobs = jobTable([makeJob({ id: 'job-1' }), makeJob({ id: 'job-2', state: 'failed' })]);
    expect(jobs).toContain('job-2');
    expect(jobs.split('\n')).toHaveLength(4);
  });

  it('a job waiting for a busy GPU: its state, why, and since when; a job that measures even if busy says so', () => {
    const waiting = makeJob({
      id: 'job-w',
      state: 'waiting',
      phase: 'gpu-busy: 1 compute process (2.3 GiB), 100 % utilization',
      waitingSince: '2026-01-01T10:00:00.000Z',
    });
    expect(jobPhaseText(waiting)).toBe('gpu-busy: 1 compute process (2.3 GiB), 100 % utilization (waiting since 2026-01-01T10:00:00.000Z)');
    expect(jobPhaseText(makeJob({ state: 'running', phase: 'l2' }))).toBe('l2');
    const text = jobTable([waiting, makeJob({ id: 'job-b', state: 'running', evenIfBusy: true })]);
    const row = text.split('\n').find((line) => line.startsWith('job-w'));
    expect(row).toMatch(
      / waiting +0% +gpu-busy: 1 compute process \(2\.3 GiB\), 100 % utilization \(waiting since 2026-01-01T10:00:00\.000Z\)/,
    );
    expect(text.split('\n').find((line) => line.startsWith('job-b'))).toContain('running (even if busy)');
  });

  it('topology: the conditions under the table, marked as a warning when measured on a busy GPU; nothing when none were recorded', () => {
    const uuid = withoutNvml.merged.gpu.uuid;
    const busy = topologyTable({ ...withoutNvml.merged, conditions: busyConditions(uuid) }).split('\n');
    expect(busy.at(-1)).toBe(`warning: ${conditionsLine(busyConditions(uuid)).text}`);
    expect(busy[1]).toMatch(/^element\s+size/);
    expect(
      topologyTable({ ...withoutNvml.merged, conditions: idleConditions(uuid) })
        .split('\n')
        .at(-1),
    ).toBe(conditionsLine(idleConditions(uuid)).text);
    expect(topologyTable(withoutNvml.merged).split('\n').at(-1)).not.toMatch(/GPU|conditions/);
  });
});
