import { describe, expect, it } from 'vitest';
import type { DynamicSnapshot, NvmlDeviceState } from '../../../server/dynamic/types.js';
import { GpuRegistry } from '../../../server/topology/gpu-registry.js';
import { gpuIdentity } from '../../helpers/fakes.js';

function snapshotWith(device: Pick<NvmlDeviceState, 'uuid' | 'mig'>): DynamicSnapshot {
  return {
    available: true,
    reason: null,
    driverVersion: '580.95.05',
    cudaDriverVersion: 13000,
    devices: [device as NvmlDeviceState],
    readAt: new Date().toISOString(),
  };
}

describe('GpuRegistry', () => {
  it('resolves every compute instance of a GPU instance as its own MIG device', () => {
    const registry = new GpuRegistry();
    const gpu = gpuIdentity();
    registry.upsert(gpu);
    registry.setMigDevices(
      snapshotWith({
        uuid: gpu.uuid,
        mig: {
          mode: { current: 1, pending: 1 },
          profiles: [],
          instances: [
            {
              gpuInstanceId: 1,
              profileId: 9,
              placement: { start: 0, size: 4 },
              migDeviceUuid: 'MIG-aaaa',
              memorySizeBytes: 40 << 30,
              multiprocessorCount: 60,
              computeInstances: [
                { id: 0, profileId: 2, multiprocessorCount: 30, migDeviceUuid: 'MIG-aaaa' },
                { id: 1, profileId: 2, multiprocessorCount: 30, migDeviceUuid: 'MIG-bbbb' },
              ],
            },
          ],
        },
      }),
    );
    expect(registry.migDeviceUuids(gpu.uuid)).toEqual(['MIG-aaaa', 'MIG-bbbb']);
    expect(registry.resolve('mig-BBBB')).toMatchObject({ gpu: { identity: { uuid: gpu.uuid } }, migDeviceUuid: 'MIG-bbbb' });
    expect(registry.resolve('MIG-aaaa')?.migDeviceUuid).toBe('MIG-aaaa');
    expect(registry.resolve('MIG-cccc')).toBeNull();
  });

  it('tells added, returned and driver-changed GPUs apart', () => {
    const registry = new GpuRegistry();
    expect(registry.upsert(gpuIdentity())).toEqual({ added: true, returned: false, driverChanged: false });
    expect(registry.upsert(gpuIdentity())).toEqual({ added: false, returned: false, driverChanged: false });
    expect(registry.markAbsentExcept(new Set())).toEqual([gpuIdentity().uuid]);
    expect(registry.resolve('0')).toBeNull();
    expect(registry.upsert(gpuIdentity({ driverVersion: '590.1' }))).toEqual({ added: false, returned: true, driverChanged: true });
  });

  it('keeps indices unique among present GPUs: of two in one slot, the one named last stays', () => {
    const registry = new GpuRegistry();
    const a100 = gpuIdentity({ uuid: 'GPU-AAAAAAAA-1111-2222-3333-444444444444', name: 'NVIDIA A100', index: 0 });
    const h100 = gpuIdentity({ uuid: 'GPU-BBBBBBBB-1111-2222-3333-444444444444', name: 'NVIDIA H100', index: 0 });
    const other = gpuIdentity({ uuid: 'GPU-CCCCCCCC-1111-2222-3333-444444444444', index: 1 });
    registry.upsert(a100);
    registry.upsert(other);
    expect(registry.markAbsentExcept(new Set([a100.uuid, other.uuid]))).toEqual([]);
    // Both remembered in slot 0 (NVML down at boot after a swap): the later word wins, the other is absent.
    registry.upsert(a100);
    registry.upsert(h100);
    registry.upsert(other);
    expect(registry.markAbsentExcept(new Set([a100.uuid, h100.uuid, other.uuid]))).toEqual([a100.uuid]);
    const present = registry
      .all()
      .filter((g) => g.present)
      .map((g) => [g.identity.index, g.identity.uuid])
      .sort();
    expect(present).toEqual([
      [0, h100.uuid],
      [1, other.uuid],
    ]);
    expect(registry.resolve('0')?.gpu.identity.uuid).toBe(h100.uuid);
    // Two GPUs trading slots in one snapshot is no conflict.
    registry.upsert({ ...h100, index: 1 });
    registry.upsert({ ...other, index: 0 });
    expect(registry.markAbsentExcept(new Set([h100.uuid, other.uuid]))).toEqual([]);
  });
});
