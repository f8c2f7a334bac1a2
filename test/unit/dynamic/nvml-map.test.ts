import { describe, expect, it } from 'vitest';
import { architectureName, mapDevice, toDynamicSnapshot } from '../../../server/dynamic/nvml-map.js';
import type { RawDevice, RawMigDevice } from '../../../server/dynamic/nvml-raw.js';

const MIB = 1024 * 1024;

function migDevice(index: number, gpuInstanceId: number, fields: Partial<RawMigDevice> = {}): RawMigDevice {
  return {
    index,
    uuid: `MIG-test-${index}`,
    gpuInstanceId,
    computeInstanceId: 0,
    multiprocessorCount: 14,
    memorySizeMB: 4864,
    gpuInstanceSliceCount: 1,
    computeInstanceSliceCount: 1,
    sharedCopyEngineCount: 1,
    degraded: [],
    ...fields,
  };
}

function rawDevice(fields: Partial<RawDevice> = {}): RawDevice {
  return {
    index: 0,
    uuid: 'GPU-test',
    name: 'NVIDIA A100-SXM4-40GB',
    serial: null,
    pciBusId: '00000000:07:00.0',
    architecture: 7,
    memory: { totalBytes: 40 * 1024 * MIB, usedBytes: 0, freeBytes: 40 * 1024 * MIB },
    bar1: { totalBytes: 64 * 1024 * MIB, usedBytes: MIB, freeBytes: 64 * 1024 * MIB - MIB },
    maxSmClockMHz: 1410,
    maxMemoryClockMHz: 1215,
    memoryBusWidthBits: 5120,
    pcieCurrentGen: 4,
    pcieMaxGen: 4,
    pcieCurrentWidth: 16,
    pcieMaxWidth: 16,
    numaNode: null,
    cpuAffinity: '0-31',
    nvlinks: [],
    migModeCurrent: 1,
    migModePending: 1,
    profiles: [
      {
        profileIndex: 0,
        id: 19,
        name: 'MIG 1g.5gb',
        sliceCount: 1,
        instanceCount: 7,
        multiprocessorCount: 14,
        copyEngineCount: 1,
        memorySizeMB: 4864,
        placements: null,
      },
      {
        profileIndex: 7,
        id: 20,
        name: 'MIG 1g.5gb+me',
        sliceCount: 1,
        instanceCount: 1,
        multiprocessorCount: 14,
        copyEngineCount: 1,
        memorySizeMB: 4864,
        placements: null,
      },
      {
        profileIndex: 1,
        id: 14,
        name: '',
        sliceCount: 2,
        instanceCount: 3,
        multiprocessorCount: 28,
        copyEngineCount: 2,
        memorySizeMB: 9856,
        placements: [{ start: 0, size: 2 }],
      },
    ],
    gpuInstances: [],
    migDevices: [],
    degraded: [],
    staticRead: true,
    readMicros: 10,
    ...fields,
  };
}

describe('mapDevice', () => {
  it('converts units and names', () => {
    const device = mapDevice(rawDevice());
    expect(device.architecture).toBe('ampere');
    expect(device.bar1).toEqual({ totalBytes: 64 * 1024 * MIB, usedBytes: MIB });
    expect(device.maxClocks).toEqual({ smMHz: 1410, memoryMHz: 1215 });
    expect(device.pcie).toEqual({ currentGen: 4, maxGen: 4, currentWidth: 16, maxWidth: 16 });
    expect(device.mig.profiles[0]?.memorySizeBytes).toBe(4864 * MIB);
    expect(device.mig.mode).toEqual({ current: 1, pending: 1 });
  });

  it('names a profile that v1-only drivers leave unnamed', () => {
    expect(mapDevice(rawDevice()).mig.profiles[2]?.name).toBe('MIG 2g.10gb');
  });

  it('attaches MIG device UUIDs to GPU and compute instances', () => {
    const device = mapDevice(
      rawDevice({
        gpuInstances: [
          {
            id: 9,
            profileId: 19,
            placement: { start: 6, size: 1 },
            computeInstances: [{ id: 0, profileId: 0, multiprocessorCount: 14, sliceCount: 1 }],
          },
        ],
        migDevices: [migDevice(0, 9)],
      }),
    );
    expect(device.mig.instances).toEqual([
      {
        gpuInstanceId: 9,
        profileId: 19,
        placement: { start: 6, size: 1 },
        migDeviceUuid: 'MIG-test-0',
        memorySizeBytes: 4864 * MIB,
        multiprocessorCount: 14,
        computeInstances: [{ id: 0, profileId: 0, multiprocessorCount: 14, migDeviceUuid: 'MIG-test-0' }],
      },
    ]);
  });

  it('rebuilds instances from MIG devices when listing GPU instances was refused', () => {
    const device = mapDevice(
      rawDevice({
        gpuInstances: null,
        degraded: ['gpuInstances: NO_PERMISSION'],
        migDevices: [migDevice(0, 3, { memorySizeMB: 9856, gpuInstanceSliceCount: 2, multiprocessorCount: 28 }), migDevice(1, 9)],
      }),
    );
    expect(device.mig.instances.map((i) => [i.gpuInstanceId, i.profileId, i.placement, i.migDeviceUuid])).toEqual([
      [3, 14, null, 'MIG-test-0'],
      // 1g.5gb and 1g.5gb+me look alike from a MIG device; the base profile wins.
      [9, 19, null, 'MIG-test-1'],
    ]);
    expect(device.degraded).toEqual(['gpuInstances: NO_PERMISSION']);
  });

  it('records a MIG device whose profile cannot be identified', () => {
    const device = mapDevice(rawDevice({ gpuInstances: null, migDevices: [migDevice(0, 4, { memorySizeMB: 1234 })] }));
    expect(device.mig.instances).toEqual([]);
    expect(device.degraded).toContain('gpuInstance[4].profile: NOT_IDENTIFIED');
  });

  it('keeps a GPU whose UUID NVML refused, under a stand-in id, and prefixes MIG device degradations', () => {
    const device = mapDevice(
      rawDevice({ uuid: null, index: 3, migDevices: [migDevice(0, 9, { degraded: ['attributes: NOT_SUPPORTED'] })] }),
    );
    expect(device.uuid).toBe('nvml-index-3');
    expect(device.degraded).toContain('migDevices[0].attributes: NOT_SUPPORTED');
  });
});

describe('toDynamicSnapshot', () => {
  it('marks the snapshot available and stamps the read time', () => {
    const at = new Date('2025-01-02T03:04:05.000Z');
    const snapshot = toDynamicSnapshot(
      {
        libraryPath: 'x',
        driverVersion: '580.95.05',
        cudaDriverVersion: 13000,
        deviceCount: 1,
        devices: [rawDevice()],
        degraded: [],
        reinitCount: 0,
        readMicros: 1,
      },
      at,
    );
    expect(snapshot).toMatchObject({
      available: true,
      reason: null,
      driverVersion: '580.95.05',
      cudaDriverVersion: 13000,
      readAt: at.toISOString(),
    });
    expect(snapshot.devices).toHaveLength(1);
  });

  it('names architectures, unknown codes included', () => {
    expect([9, 10, 0xffffffff, null].map(architectureName)).toEqual(['hopper', 'blackwell', 'unknown', null]);
  });
});
