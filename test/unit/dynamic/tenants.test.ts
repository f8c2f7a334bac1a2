import { describe, expect, it } from 'vitest';
import type { GpuActivity, GpuProcess } from '../../../server/dynamic/activity-types.js';
import { busyVerdict, DEFAULT_BUSY_THRESHOLDS, tenantsOf } from '../../../server/dynamic/tenants.js';
import { gpuActivity } from '../../helpers/gpu-activity.js';

const GIB = 2 ** 30;
const MIB = 2 ** 20;
const TOPOD_PID = 100;
const PROBE_PID = 101;

function compute(pid: number, usedMemoryBytes: number | null): GpuProcess {
  return { pid, kind: 'compute', usedMemoryBytes, migDeviceUuid: null };
}

function graphics(pid: number, usedMemoryBytes: number | null): GpuProcess {
  return { pid, kind: 'graphics', usedMemoryBytes, migDeviceUuid: null };
}

function activity(processes: GpuProcess[], maxPercent: number | null = 0, overrides: Partial<GpuActivity> = {}): GpuActivity {
  return gpuActivity('GPU-11111111-2222-3333-4444-555555555555', {
    readAt: '2025-01-01T00:00:00.000Z',
    processes,
    utilization:
      maxPercent === null
        ? null
        : { source: 'nvml-samples', maxPercent, meanPercent: maxPercent, sampleCount: 12, spanMs: 1833, memoryPercent: 0 },
    temperatureC: 33,
    smClockMHz: 345,
    clocksEventReasons: ['gpu-idle'],
    ...overrides,
  });
}

const beforeProbe = { pids: [TOPOD_PID], probesOnGpu: 0 };
const probing = { pids: [TOPOD_PID, PROBE_PID], probesOnGpu: 1 };

function verdict(a: GpuActivity, own = beforeProbe) {
  return busyVerdict(a, tenantsOf(a, own));
}

describe('tenantsOf', () => {
  it('counts every process as foreign before our probe starts', () => {
    const tenants = tenantsOf(activity([compute(5000, 2 * GIB), graphics(5000, 2 * GIB), graphics(6000, 4 * MIB)]), beforeProbe);
    expect(tenants).toMatchObject({
      pids: [5000, 6000],
      computePids: 1,
      graphicsOnlyPids: 1,
      memoryBytes: 2 * GIB + 4 * MIB,
      ownMatchedBy: 'no-probe',
      ownProbeRunning: false,
    });
  });

  it('leaves out our own PIDs where NVML reports them (the host PID namespace)', () => {
    const tenants = tenantsOf(activity([compute(PROBE_PID, 3 * GIB), compute(7000, GIB)]), probing);
    expect(tenants).toMatchObject({ pids: [7000], memoryBytes: GIB, ownMatchedBy: 'pid', ownProbeRunning: true });
  });

  it('in a container, leaves out as many compute processes as we run probes, the least memory first', () => {
    // NVML's host PIDs never match ours: our probe is one of the two, which one cannot be told.
    const tenants = tenantsOf(activity([compute(812345, 600 * MIB), compute(812999, 3 * GIB)]), probing);
    expect(tenants).toMatchObject({ pids: [812999], memoryBytes: 3 * GIB, ownMatchedBy: 'count', ownProbeRunning: true });
    const alone = tenantsOf(activity([compute(812345, 600 * MIB), graphics(812345, 600 * MIB)]), probing);
    expect(alone).toMatchObject({ pids: [], processes: [], memoryBytes: 0, ownMatchedBy: 'count' });
  });

  it('leaves a graphics-only process in when counting ours: probes are compute processes', () => {
    const tenants = tenantsOf(activity([graphics(900001, 4 * MIB), compute(900002, GIB)]), probing);
    expect(tenants.pids).toEqual([900001]);
  });

  it('refuses a probe count that is not one', () => {
    expect(() => tenantsOf(activity([]), { pids: [], probesOnGpu: -1 })).toThrow(RangeError);
    expect(() => tenantsOf(activity([]), { pids: [], probesOnGpu: 0.5 })).toThrow(/integer >= 0/);
  });
});

describe('busyVerdict', () => {
  it('calls a GPU busy with a compute tenant at full utilization, naming both', () => {
    expect(verdict(activity([compute(5000, 2 * GIB)], 100))).toEqual({
      busy: true,
      reason: 'gpu-busy: 1 compute process (2.0 GiB), 100 % utilization',
    });
  });

  it('calls an idle GPU idle, with the same facts', () => {
    expect(verdict(activity([], 0))).toEqual({ busy: false, reason: 'idle: no other process, 0 % utilization' });
  });

  it('calls a GPU busy on utilization alone (a tenant NVML does not list)', () => {
    expect(verdict(activity([], 37))).toEqual({ busy: true, reason: 'gpu-busy: no other process, 37 % utilization' });
  });

  it('calls a GPU busy on an idle compute tenant: it holds a context and may run any moment', () => {
    expect(verdict(activity([compute(5000, 512 * MIB), compute(5001, 512 * MIB)], 0))).toEqual({
      busy: true,
      reason: 'gpu-busy: 2 compute processes (1.0 GiB), 0 % utilization',
    });
  });

  it("lets a display server's few MiB pass, and counts a tenant whose memory NVML cannot attribute", () => {
    expect(verdict(activity([graphics(1200, 4 * MIB)], 0))).toEqual({
      busy: false,
      reason: 'idle: 1 graphics process (4 MiB), 0 % utilization',
    });
    expect(verdict(activity([compute(5000, null)], 0))).toEqual({
      busy: true,
      reason: 'gpu-busy: 1 compute process (1 unattributed), 0 % utilization',
    });
  });

  it('ignores utilization while our probe runs: it is ours and theirs together', () => {
    expect(verdict(activity([compute(PROBE_PID, 3 * GIB)], 100), probing)).toEqual({ busy: false, reason: 'idle: no other process' });
    expect(verdict(activity([compute(PROBE_PID, 3 * GIB), compute(7000, GIB)], 100), probing)).toEqual({
      busy: true,
      reason: 'gpu-busy: 1 compute process (1.0 GiB)',
    });
  });

  it('says what it could not read', () => {
    const unreadable = activity([], null, { processListsRead: { compute: false, graphics: false } });
    expect(verdict(unreadable)).toEqual({ busy: false, reason: 'idle: processes unreadable, utilization unknown' });
  });

  it('applies the thresholds it is given, and refuses negative ones', () => {
    const light = activity([compute(5000, 300 * MIB)], 8);
    const lenient = { utilizationPercent: 10, tenantMemoryBytes: GIB };
    expect(busyVerdict(light, tenantsOf(light, beforeProbe), lenient)).toEqual({
      busy: false,
      reason: 'idle: 1 compute process (300 MiB), 8 % utilization',
    });
    expect(busyVerdict(light, tenantsOf(light, beforeProbe), DEFAULT_BUSY_THRESHOLDS).busy).toBe(true);
    expect(() => busyVerdict(light, tenantsOf(light, beforeProbe), { utilizationPercent: -1, tenantMemoryBytes: 0 })).toThrow(RangeError);
  });
});
