/** The real addon's readActivity against the fake libnvidia-ml: processes, utilization and conditions of one GPU. */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GpuActivity } from '../../../server/dynamic/activity-types.js';
import type { NvmlSource } from '../../../server/dynamic/nvml-source.js';
import { busyVerdict, tenantsOf } from '../../../server/dynamic/tenants.js';
import { assertNativeBuilt, fakeSource, ScenarioFile, type ScenarioJson } from './fake-nvml.js';

const GIB = 2 ** 30;
const H100 = 'GPU-1c3e5a7b-9d2f-4b6a-8c1e-3f5a7b9d2e40';
let scenario: ScenarioFile | null = null;
let source: NvmlSource | null = null;

beforeAll(assertNativeBuilt);
afterEach(async () => {
  await source?.close();
  scenario?.remove();
  source = null;
  scenario = null;
});

function open(fixture: string, edit?: (s: ScenarioJson) => void): NvmlSource {
  scenario = new ScenarioFile(fixture);
  if (edit) scenario.edit(edit);
  source = fakeSource();
  return source;
}

async function activityOf(nvml: NvmlSource, uuid: string, windowMs = 2000): Promise<GpuActivity> {
  const { activity, reason } = await nvml.readActivity(uuid, { windowMs });
  expect(reason).toBeNull();
  if (!activity) throw new Error(`no activity: ${reason}`);
  return activity;
}

describe('addon + fake NVML: activity', () => {
  it('reads a scenario without activity keys as an idle GPU', async () => {
    const activity = await activityOf(open('h100-80gb-mig-off.json'), H100);
    expect(activity).toMatchObject({
      gpuUuid: H100,
      index: 0,
      processes: [],
      processListsRead: { compute: true, graphics: true },
      utilization: { source: 'nvml-samples', maxPercent: 0, meanPercent: 0, sampleCount: 12, memoryPercent: 0 },
      temperatureC: 33,
      powerWatts: 72,
      smClockMHz: 345,
      maxSmClockMHz: 1980,
      clocksEventReasons: ['gpu-idle'],
      persistenceMode: true,
      eccModeCurrent: true,
      migEnabled: false,
      degraded: [],
    });
    expect(activity.memory?.totalBytes).toBe(85520809984);
    const own = { pids: [process.pid], probesOnGpu: 0 };
    expect(busyVerdict(activity, tenantsOf(activity, own))).toEqual({ busy: false, reason: 'idle: no other process, 0 % utilization' });
  });

  it('sees a training job: its process, full utilization, the power cap holding the clocks', async () => {
    const activity = await activityOf(open('h100-80gb-tenant.json'), H100);
    expect(activity).toMatchObject({
      processes: [{ pid: 48213, kind: 'compute', usedMemoryBytes: 2415919104, migDeviceUuid: null }],
      utilization: { source: 'nvml-samples', maxPercent: 100, memoryPercent: 87 },
      temperatureC: 61,
      powerWatts: 612,
      smClockMHz: 1755,
      clocksEventReasons: ['sw-power-cap'],
    });
    const verdict = busyVerdict(activity, tenantsOf(activity, { pids: [process.pid], probesOnGpu: 0 }));
    expect(verdict).toEqual({ busy: true, reason: 'gpu-busy: 1 compute process (2.3 GiB), 100 % utilization' });
  });

  it('sees a tenant arrive between two reads (the scenario edited live)', async () => {
    const nvml = open('h100-80gb-mig-off.json');
    expect((await activityOf(nvml, H100)).processes).toEqual([]);
    scenario?.edit((s) => {
      s.devices[0].processes = [{ pid: 31337, usedMemoryBytes: GIB, type: 'compute+graphics' }];
      s.devices[0].utilization = { gpuPercent: 40, samples: [0, 0, 0, 90, 40] };
      s.devices[0].clocksEventReasons = ['hw-slowdown', 'hw-thermal-slowdown'];
    });
    const busy = await activityOf(nvml, H100);
    expect(busy.processes.map((p) => [p.pid, p.kind])).toEqual([
      [31337, 'compute'],
      [31337, 'graphics'],
    ]);
    expect(busy.utilization).toMatchObject({ maxPercent: 90, sampleCount: 5 });
    expect(busy.clocksEventReasons).toEqual(['hw-slowdown', 'hw-thermal-slowdown']);
  });

  it('reads processes on each MIG device, and no utilization with MIG on', async () => {
    const nvml = open('a100-40gb-mig-mixed.json', (s) => {
      s.devices[0].processes = [{ pid: 9000, usedMemoryBytes: 600 * 2 ** 20 }];
      s.devices[0].gpuInstances[1].processes = [{ pid: 9001, usedMemoryBytes: 3 * GIB }];
    });
    const expected = scenario?.read() as ScenarioJson;
    const activity = await activityOf(nvml, expected.devices[0].uuid);
    expect(activity.migEnabled).toBe(true);
    expect(activity.processes).toEqual([
      { pid: 9000, kind: 'compute', usedMemoryBytes: 600 * 2 ** 20, migDeviceUuid: null },
      { pid: 9001, kind: 'compute', usedMemoryBytes: 3 * GIB, migDeviceUuid: expected.devices[0].gpuInstances[1].migDeviceUuid },
    ]);
    expect(activity.utilization).toBeNull();
    expect(activity.degraded).toEqual(['utilization: NOT_SUPPORTED', 'utilizationSamples: NOT_SUPPORTED']);
    const verdict = busyVerdict(activity, tenantsOf(activity, { pids: [process.pid], probesOnGpu: 0 }));
    expect(verdict).toEqual({ busy: true, reason: 'gpu-busy: 2 compute processes (3.6 GiB), utilization unknown' });
  });

  it('marks every refused field and still answers the rest', async () => {
    const nvml = open('h100-80gb-mig-off.json', (s) => {
      Object.assign(s.devices[0], {
        utilization: null,
        temperatureC: null,
        powerMilliwatts: null,
        clocks: null,
        clocksEventReasons: null,
        persistenceMode: null,
        eccMode: null,
      });
      s.devices[0].processes = [{ pid: 777, usedMemoryBytes: null }];
      s.failures.calls = { nvmlDeviceGetGraphicsRunningProcesses_v3: 'NO_PERMISSION' };
    });
    const activity = await activityOf(nvml, H100);
    expect(activity).toMatchObject({
      processes: [{ pid: 777, kind: 'compute', usedMemoryBytes: null }],
      processListsRead: { compute: true, graphics: false },
      utilization: null,
      temperatureC: null,
      powerWatts: null,
      smClockMHz: null,
      maxSmClockMHz: 1980,
      clocksEventReasons: null,
      persistenceMode: null,
      eccModeCurrent: null,
    });
    expect(activity.degraded).toEqual([
      'processes.graphics: NO_PERMISSION',
      'utilization: NOT_SUPPORTED',
      'utilizationSamples: NOT_SUPPORTED',
      'temperature: NOT_SUPPORTED',
      'powerUsage: NOT_SUPPORTED',
      'clocks.sm: NOT_SUPPORTED',
      'clocksEventReasons: NOT_SUPPORTED',
      'persistenceMode: NOT_SUPPORTED',
      'eccMode: NOT_SUPPORTED',
    ]);
    const verdict = busyVerdict(activity, tenantsOf(activity, { pids: [], probesOnGpu: 0 }));
    expect(verdict).toEqual({ busy: true, reason: 'gpu-busy: 1 compute process (1 unattributed), utilization unknown' });
  });

  it('says so when no process list can be read', async () => {
    const nvml = open('h100-80gb-mig-off.json', (s) => {
      s.failures.calls = {
        nvmlDeviceGetComputeRunningProcesses_v3: 'NO_PERMISSION',
        nvmlDeviceGetGraphicsRunningProcesses_v3: 'NO_PERMISSION',
      };
    });
    const activity = await activityOf(nvml, H100);
    expect(activity.processListsRead).toEqual({ compute: false, graphics: false });
    expect(busyVerdict(activity, tenantsOf(activity, { pids: [], probesOnGpu: 0 })).reason).toBe(
      'idle: processes unreadable, 0 % utilization',
    );
  });

  it('polls utilization over the window where the driver keeps no samples', async () => {
    const nvml = open('h100-80gb-tenant.json', (s) => {
      s.devices[0].utilization = { gpuPercent: 55, memoryPercent: 20, samples: null };
    });
    const activity = await activityOf(nvml, H100, 40);
    expect(activity.utilization).toMatchObject({ source: 'polled', maxPercent: 55, meanPercent: 55, sampleCount: 5, memoryPercent: 20 });
    expect(activity.utilization?.spanMs).toBeGreaterThan(0);
    expect(activity.degraded).toEqual(['utilizationSamples: NOT_SUPPORTED']);
  });

  it('answers with a reason for a GPU that is not there, or no driver', async () => {
    const nvml = open('h100-80gb-mig-off.json');
    expect(await nvml.readActivity('GPU-00000000-0000-0000-0000-000000000000')).toEqual({
      activity: null,
      reason: 'TOPOD_NVML_GPU_NOT_FOUND: no GPU with UUID GPU-00000000-0000-0000-0000-000000000000 (NVML lists 1)',
    });
    scenario?.edit((s) => {
      s.failures.rmVersionMismatch = 1;
    });
    // A driver change mid-session: the read re-initialises NVML and answers.
    expect((await nvml.readActivity(H100)).activity?.gpuUuid).toBe(H100);
  });
});
