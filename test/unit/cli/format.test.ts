import { describe, expect, it } from 'vitest';
import { fitText } from '../../../server/cli/fit-text.js';
import { gpuTable, jobPhaseText, jobTable, parseSize, topologyTable } from '../../../server/cli/format.js';
import { conditionsLine } from '../../../server/faces/conditions.js';
import { elementLabel } from '../../../server/faces/documents.js';
import { fitAdvice } from '../../../server/faces/fit.js';
import type { ElementTopology } from '../../../server/model/document.js';
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

  it.each(['lots', '12 parsecs', '-4', ''])('refuses %j, saying what it takes', (text) => expect(() => parseSize(text)).toThrow(/is not a size: write bytes or a number with KiB/));
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

  it('GPUs and jobs, one row each', () => {
    const gpus = gpuTable([makeGpu({ index: 0, simulated: true }), makeGpu({ index: 1, uuid: 'GPU-2', present: false })]);
    expect(gpus.split('\n')).toHaveLength(4);
    expect(gpus).toContain('(sim)');
    const jobs = jobTable([makeJob({ id: 'job-1' }), makeJob({ id: 'job-2', state: 'failed' })]);
    expect(jobs).toContain('job-2');
    expect(jobs.split('\n')).toHaveLength(4);
  });

  it('a job waiting for a busy GPU: its state, why, and since when; a job that measures even if busy says so', () => {
    const waiting = makeJob({ id: 'job-w', state: 'waiting', phase: 'gpu-busy: 1 compute process (2.3 GiB), 100 % utilization', waitingSince: '2026-01-01T10:00:00.000Z' });
    expect(jobPhaseText(waiting)).toBe('gpu-busy: 1 compute process (2.3 GiB), 100 % utilization (waiting since 2026-01-01T10:00:00.000Z)');
    expect(jobPhaseText(makeJob({ state: 'running', phase: 'l2' }))).toBe('l2');
    const text = jobTable([waiting, makeJob({ id: 'job-b', state: 'running', evenIfBusy: true })]);
    const row = text.split('\n').find((line) => line.startsWith('job-w'));
    expect(row).toMatch(/ waiting +0% +gpu-busy: 1 compute process \(2\.3 GiB\), 100 % utilization \(waiting since 2026-01-01T10:00:00\.000Z\)/);
    expect(text.split('\n').find((line) => line.startsWith('job-b'))).toContain('running (even if busy)');
  });

  it('topology: the conditions under the table, marked as a warning when measured on a busy GPU; nothing when none were recorded', () => {
    const uuid = withoutNvml.merged.gpu.uuid;
    const busy = topologyTable({ ...withoutNvml.merged, conditions: busyConditions(uuid) }).split('\n');
    expect(busy.at(-1)).toBe(`warning: ${conditionsLine(busyConditions(uuid)).text}`);
    expect(busy[1]).toMatch(/^element\s+size/);
    expect(topologyTable({ ...withoutNvml.merged, conditions: idleConditions(uuid) }).split('\n').at(-1)).toBe(conditionsLine(idleConditions(uuid)).text);
    expect(topologyTable(withoutNvml.merged).split('\n').at(-1)).not.toMatch(/GPU|conditions/);
  });
});
