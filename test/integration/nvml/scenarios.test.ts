import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NvmlSource } from '../../../server/dynamic/nvml-source.js';
import type { NvmlDeviceState } from '../../../server/dynamic/types.js';
import { buildMigView } from '../../../server/topology/mig.js';
import { assertNativeBuilt, fakeSource, ScenarioFile, type ScenarioJson } from './fake-nvml.js';

const MIB = 1024 * 1024;
let scenario: ScenarioFile | null = null;
let source: NvmlSource | null = null;

async function readScenario(fixture: string, edit?: (s: ScenarioJson) => void) {
  scenario = new ScenarioFile(fixture);
  if (edit) scenario.edit(edit);
  source = fakeSource();
  return { snapshot: await source.read(), expected: scenario.read() };
}

function only(devices: NvmlDeviceState[]): NvmlDeviceState {
  expect(devices).toHaveLength(1);
  return devices[0] as NvmlDeviceState;
}

beforeAll(assertNativeBuilt);
afterEach(async () => {
  await source?.close();
  scenario?.remove();
  source = null;
  scenario = null;
});

describe('addon + fake NVML: scenarios', () => {
  it('reads an A100 with 3g.20gb + 2g.10gb + 1g.5gb instances', async () => {
    const { snapshot, expected } = await readScenario('a100-40gb-mig-mixed.json');
    const want = expected.devices[0];
    expect(snapshot).toMatchObject({
      available: true,
      reason: null,
      driverVersion: expected.driverVersion,
      cudaDriverVersion: expected.cudaDriverVersion,
    });
    const device = only(snapshot.devices);
    expect(device).toMatchObject({
      index: 0,
      uuid: want.uuid,
      name: want.name,
      serial: want.serial,
      pciBusId: want.pciBusId,
      architecture: 'ampere',
      bar1: { totalBytes: want.bar1TotalBytes, usedBytes: want.bar1UsedBytes },
      maxClocks: want.maxClocks,
      memoryBusWidthBits: want.memoryBusWidthBits,
      pcie: want.pcie,
      numaNode: want.numaNode,
      cpuAffinity: want.cpuAffinity,
      nvlinks: [],
      degraded: [],
    });
    expect(device.memory?.totalBytes).toBe(want.memoryTotalBytes);
    expect(device.mig.mode).toEqual({ current: 1, pending: 1 });
    expect(device.mig.profiles.map((p) => [p.id, p.name, p.multiprocessorCount, p.memorySizeBytes])).toEqual(
      want.gpuInstanceProfiles.map((p: ScenarioJson) => [p.id, p.name, p.multiprocessorCount, p.memorySizeMB * MIB]),
    );
    expect(device.mig.instances.map((i) => [i.gpuInstanceId, i.profileId, i.placement, i.migDeviceUuid])).toEqual(
      want.gpuInstances.map((g: ScenarioJson) => [g.id, g.profileId, g.placement, g.migDeviceUuid]),
    );
    const view = buildMigView({ device, l2SizeBytes: 40 * MIB, l2SegmentBytes: 20 * MIB });
    expect(view.instances.map((i) => i.l2.bytes)).toEqual([20 * MIB, 10 * MIB, 5 * MIB]);
  });

  it('reads an H100 with 3g.40gb + 2g.20gb + 1g.10gb instances and their compute instances', async () => {
    const { snapshot, expected } = await readScenario('h100-80gb-mig-mixed.json');
    const device = only(snapshot.devices);
    expect(device.architecture).toBe('hopper');
    expect(device.mig.instances.map((i) => i.computeInstances)).toEqual(
      expected.devices[0].gpuInstances.map((g: ScenarioJson) => [
        {
          id: 0,
          profileId: expect.any(Number),
          multiprocessorCount: g.computeInstances[0].multiprocessorCount,
          migDeviceUuid: g.migDeviceUuid,
        },
      ]),
    );
    const view = buildMigView({ device, l2SizeBytes: 50 * MIB, l2SegmentBytes: null });
    expect(view.instances.map((i) => [i.profileName, i.l2.memorySlices, i.l2.source])).toEqual([
      ['MIG 3g.40gb', 4, 'nvml'],
      ['MIG 2g.20gb', 2, 'nvml'],
      ['MIG 1g.10gb', 1, 'nvml'],
    ]);
  });

  it('reads two GPUs with NVLinks, NUMA nodes and different MIG modes', async () => {
    const { snapshot, expected } = await readScenario('two-gpu-h100.json');
    expect(snapshot.devices.map((d) => [d.index, d.uuid, d.numaNode, d.cpuAffinity, d.mig.mode?.current, d.mig.instances.length])).toEqual(
      expected.devices.map((d: ScenarioJson, index: number) => [
        index,
        d.uuid,
        d.numaNode,
        d.cpuAffinity,
        d.migMode.current,
        d.gpuInstances.length,
      ]),
    );
    for (const [index, device] of snapshot.devices.entries()) {
      expect(device.nvlinks).toEqual(expected.devices[index].nvlinks);
    }
  });

  it('lists the profiles with MIG disabled and no instances', async () => {
    const { snapshot, expected } = await readScenario('h100-80gb-mig-off.json');
    const device = only(snapshot.devices);
    expect(device.mig.mode).toEqual({ current: 0, pending: 0 });
    expect(device.mig.instances).toEqual([]);
    expect(device.mig.profiles).toHaveLength(expected.devices[0].gpuInstanceProfiles.length);
    expect(device.mig.profiles.every((p) => p.multiprocessorCount > 0 && p.placements !== null)).toBe(true);
    expect(device.degraded).toEqual([]);
  });

  it('degrades placements to NO_PERMISSION and derives L2 shares from memory', async () => {
    const { snapshot } = await readScenario('a100-40gb-mig-mixed.json', (s) => {
      s.devices[0].permissions.placements = false;
    });
    const device = only(snapshot.devices);
    expect(device.degraded).toEqual(['placements: NO_PERMISSION']);
    expect(device.mig.profiles.every((p) => p.placements === null)).toBe(true);
    const view = buildMigView({ device, l2SizeBytes: 40 * MIB, l2SegmentBytes: null });
    expect(view.instances.map((i) => [i.l2.bytes, i.l2.source])).toEqual([
      [20 * MIB, 'derived'],
      [10 * MIB, 'derived'],
      [5 * MIB, 'derived'],
    ]);
  });

  it('rebuilds instances from MIG devices when listing GPU instances is refused', async () => {
    const { snapshot, expected } = await readScenario('a100-40gb-mig-mixed.json', (s) => {
      s.devices[0].permissions = { placements: false, gpuInstances: false };
    });
    const device = only(snapshot.devices);
    expect(device.degraded).toEqual(['placements: NO_PERMISSION', 'gpuInstances: NO_PERMISSION']);
    expect(device.mig.instances.map((i) => [i.gpuInstanceId, i.profileId, i.placement, i.migDeviceUuid])).toEqual(
      expected.devices[0].gpuInstances.map((g: ScenarioJson) => [g.id, g.profileId, null, g.migDeviceUuid]),
    );
  });

  it('degrades single fields the driver refuses and keeps the rest', async () => {
    const { snapshot } = await readScenario('a100-40gb-mig-mixed.json', (s) => {
      s.failures.calls = {
        nvmlDeviceGetSerial: 'NVML_ERROR_NOT_SUPPORTED',
        nvmlDeviceGetNumaNodeId: 'NO_PERMISSION',
        nvmlDeviceGetMaxClockInfo: 17,
      };
      delete s.devices[0].bar1TotalBytes;
    });
    const device = only(snapshot.devices);
    expect(device.serial).toBeNull();
    expect(device.numaNode).toBeNull();
    expect(device.bar1).toBeNull();
    expect(device.maxClocks).toEqual({ smMHz: null, memoryMHz: null });
    expect(device.degraded).toEqual([
      'serial: NOT_SUPPORTED',
      'bar1: NOT_SUPPORTED',
      'maxClocks.sm: OPERATING_SYSTEM',
      'maxClocks.memory: OPERATING_SYSTEM',
      'numaNode: NO_PERMISSION',
    ]);
    expect(device.mig.instances).toHaveLength(3);
  });
});
