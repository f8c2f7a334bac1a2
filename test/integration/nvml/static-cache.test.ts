/**
 * The addon's static cache, proved by counting NVML calls in the fake's call
 * log: a steady-state poll asks only what can change, the static fields are
 * asked again exactly when the cache key says so, and a cached snapshot is the
 * snapshot a full read gives.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NvmlSource } from '../../../server/dynamic/nvml-source.js';
import type { DynamicSnapshot } from '../../../server/dynamic/types.js';
import { assertNativeBuilt, fakeSource, ScenarioFile, type CallLog, type ScenarioJson } from './fake-nvml.js';

const PROFILE_CALLS = ['nvmlDeviceGetGpuInstanceProfileInfoV', 'nvmlDeviceGetGpuInstancePossiblePlacements_v2'];
/** Every entry point behind a cached field: none of them belongs in a steady-state poll. */
const STATIC_CALLS = [
  ...PROFILE_CALLS,
  'nvmlGpuInstanceGetComputeInstanceProfileInfoV',
  'nvmlDeviceGetName',
  'nvmlDeviceGetSerial',
  'nvmlDeviceGetPciInfo_v3',
  'nvmlDeviceGetArchitecture',
  'nvmlDeviceGetMaxClockInfo',
  'nvmlDeviceGetMemoryBusWidth',
  'nvmlDeviceGetMaxPcieLinkGeneration',
  'nvmlDeviceGetMaxPcieLinkWidth',
  'nvmlDeviceGetNumaNodeId',
  'nvmlDeviceGetCpuAffinity',
];
/** What a poll must still ask every time. */
const LIVE_CALLS = [
  'nvmlSystemGetDriverVersion',
  'nvmlDeviceGetCount_v2',
  'nvmlDeviceGetUUID',
  'nvmlDeviceGetMigMode',
  'nvmlDeviceGetMemoryInfo_v2',
  'nvmlDeviceGetBAR1MemoryInfo',
  'nvmlDeviceGetCurrPcieLinkGeneration',
  'nvmlDeviceGetCurrPcieLinkWidth',
  'nvmlDeviceGetGpuInstances',
  'nvmlGpuInstanceGetComputeInstances',
  'nvmlDeviceGetMigDeviceHandleByIndex',
];

let scenario: ScenarioFile | null = null;
const sources: NvmlSource[] = [];

function source(options: { staticMaxAgeMs?: number } = {}): NvmlSource {
  const s = fakeSource(options);
  sources.push(s);
  return s;
}

function callsTo(calls: Map<string, number>, names: string[]): number {
  return names.reduce((sum, name) => sum + (calls.get(name) ?? 0), 0);
}

function staticReads(nvml: NvmlSource): boolean[] {
  return nvml.lastRead?.perDevice.map((d) => d.staticRead) ?? [];
}

/** A source past its first read, with the call log emptied. */
async function warm(fixture: string, edit?: (s: ScenarioJson) => void): Promise<{ nvml: NvmlSource; calls: CallLog; file: ScenarioFile }> {
  const file = new ScenarioFile(fixture);
  scenario = file;
  if (edit) file.edit(edit);
  const calls = file.logCalls();
  const nvml = source();
  expect((await nvml.read()).available).toBe(true);
  calls.take();
  return { nvml, calls, file };
}

function withoutReadAt(snapshot: DynamicSnapshot): Omit<DynamicSnapshot, 'readAt'> {
  const { readAt: _readAt, ...rest } = snapshot;
  return rest;
}

beforeAll(assertNativeBuilt);
afterEach(async () => {
  for (const s of sources.splice(0)) await s.close();
  scenario?.remove();
  scenario = null;
});

describe('addon static cache (call counts on the fake NVML)', () => {
  it('queries the profile table, placements and static fields on the first read', async () => {
    const file = new ScenarioFile('h100-80gb-mig-mixed.json');
    scenario = file;
    const calls = file.logCalls();
    const nvml = source();
    await nvml.read();
    const first = calls.take();
    for (const name of [...STATIC_CALLS, ...LIVE_CALLS]) expect(first.get(name), name).toBeGreaterThan(0);
    expect(staticReads(nvml)).toEqual([true]);
  });

  it('asks only live state in steady-state polls, and the same calls every time', async () => {
    const { nvml, calls } = await warm('h100-80gb-mig-mixed.json');
    const polls: Array<Map<string, number>> = [];
    for (let i = 0; i < 3; i++) {
      await nvml.read();
      polls.push(calls.take());
      expect(staticReads(nvml)).toEqual([false]);
    }
    for (const poll of polls) {
      expect(callsTo(poll, STATIC_CALLS)).toBe(0);
      for (const name of LIVE_CALLS) expect(poll.get(name), name).toBeGreaterThan(0);
      expect(poll).toEqual(polls[0]);
    }
  });

  it('still follows live MIG changes from the cached profile table', async () => {
    const { nvml, calls, file } = await warm('h100-80gb-mig-mixed.json');
    const before = (await nvml.read()).devices[0]?.mig.instances ?? [];
    file.edit((s) => {
      s.devices[0].gpuInstances.pop();
    });
    const after = (await nvml.read()).devices[0]?.mig.instances ?? [];
    expect(after.map((i) => i.gpuInstanceId)).toEqual(before.slice(0, -1).map((i) => i.gpuInstanceId));
    expect(callsTo(calls.take(), PROFILE_CALLS)).toBe(0);
  });

  const triggers: Array<[string, (s: ScenarioJson) => void]> = [
    [
      'MIG mode pending changes',
      (s) => {
        s.devices[0].migMode.pending = 0;
      },
    ],
    [
      'MIG mode current changes',
      (s) => {
        s.devices[0].migMode = { current: 0, pending: 0 };
      },
    ],
    [
      'the driver version changes',
      (s) => {
        s.driverVersion = '580.999.01';
      },
    ],
    [
      'NVML re-initialises after LIB_RM_VERSION_MISMATCH',
      (s) => {
        s.failures = { ...s.failures, rmVersionMismatch: 1 };
      },
    ],
  ];

  it.each(triggers)('re-reads the profile table when %s, then caches again', async (name, change) => {
    const { nvml, calls, file } = await warm('h100-80gb-mig-mixed.json');
    const reinitBefore = nvml.lastRead?.reinitCount ?? 0;
    file.edit(change);
    await nvml.read();
    const changed = calls.take();
    expect(changed.get('nvmlDeviceGetGpuInstanceProfileInfoV')).toBeGreaterThan(0);
    expect(staticReads(nvml)).toEqual([true]);
    if (name.includes('re-initialises')) expect(nvml.lastRead?.reinitCount).toBe(reinitBefore + 1);
    await nvml.read();
    expect(callsTo(calls.take(), STATIC_CALLS)).toBe(0);
    expect(staticReads(nvml)).toEqual([false]);
  });

  it('reads the static fields of a newly seen device only', async () => {
    let second: ScenarioJson = {};
    const { nvml, calls, file } = await warm('two-gpu-h100.json', (s) => {
      second = s.devices.pop();
    });
    file.edit((s) => {
      s.devices.push(second);
    });
    const snapshot = await nvml.read();
    expect(snapshot.devices).toHaveLength(2);
    expect(staticReads(nvml)).toEqual([false, true]);
    const oneScan = calls.take().get('nvmlDeviceGetGpuInstanceProfileInfoV');
    await source({ staticMaxAgeMs: 0 }).read();
    // A full read scans both devices: twice what adding one device cost.
    expect(calls.take().get('nvmlDeviceGetGpuInstanceProfileInfoV')).toBe(2 * (oneScan ?? 0));
  });

  it('re-reads everything once the cached fields are older than staticMaxAgeMs', async () => {
    const { calls } = await warm('h100-80gb-mig-mixed.json');
    const eager = source({ staticMaxAgeMs: 0 });
    for (let i = 0; i < 2; i++) {
      await eager.read();
      expect(callsTo(calls.take(), PROFILE_CALLS)).toBeGreaterThan(0);
      expect(staticReads(eager)).toEqual([true]);
    }
  });

  it('asks again next poll for a static field refused for a passing reason', async () => {
    const { nvml, calls } = await warm('h100-80gb-mig-mixed.json', (s) => {
      s.failures = { ...s.failures, calls: { nvmlDeviceGetMaxClockInfo: 'NVML_ERROR_TIMEOUT' } };
    });
    await nvml.read();
    expect(calls.take().get('nvmlDeviceGetMaxClockInfo')).toBe(2);
    expect(staticReads(nvml)).toEqual([true]);
  });

  const identical: Array<[string, string, ((s: ScenarioJson) => void) | undefined]> = [
    ['H100 mixed MIG', 'h100-80gb-mig-mixed.json', undefined],
    ['A100 mixed MIG', 'a100-40gb-mig-mixed.json', undefined],
    ['H100 MIG off', 'h100-80gb-mig-off.json', undefined],
    ['two H100s with NVLink', 'two-gpu-h100.json', undefined],
    [
      'placements and GPU instances refused',
      'a100-40gb-mig-mixed.json',
      (s) => {
        s.devices[0].permissions = { placements: false, gpuInstances: false };
      },
    ],
    [
      'static and live fields refused',
      'a100-40gb-mig-mixed.json',
      (s) => {
        s.failures = {
          ...s.failures,
          calls: {
            nvmlDeviceGetSerial: 'NOT_SUPPORTED',
            nvmlDeviceGetNumaNodeId: 'NO_PERMISSION',
            nvmlGpuInstanceGetComputeInstanceProfileInfoV: 'NO_PERMISSION',
          },
        };
        delete s.devices[0].bar1TotalBytes;
      },
    ],
  ];

  it.each(identical)('gives a cached snapshot equal to a full read: %s', async (_name, fixture, edit) => {
    const { nvml } = await warm(fixture, edit);
    const cached = await nvml.read();
    expect(staticReads(nvml).every((fresh) => !fresh)).toBe(true);
    const full = source({ staticMaxAgeMs: 0 });
    const fresh = await full.read();
    expect(staticReads(full).every((read) => read)).toBe(true);
    expect(withoutReadAt(cached)).toEqual(withoutReadAt(fresh));
  });
});
