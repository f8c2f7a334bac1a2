import { describe, expect, it } from 'vitest';
import { diffSnapshots } from '../../../server/dynamic/snapshot-diff.js';
import { UNAVAILABLE_SNAPSHOT } from '../../../server/dynamic/types.js';
import { deviceState, firstDevice, snapshotOf } from './scenario-device.js';

const a100 = firstDevice('a100-40gb-mig-mixed.json');
const h100 = firstDevice('h100-80gb-mig-mixed.json');

describe('diffSnapshots', () => {
  it('reports every GPU as added against no baseline', () => {
    const events = diffSnapshots(null, snapshotOf([deviceState(a100), deviceState(h100, {}, 1)]));
    expect(events).toEqual([
      { type: 'gpu.added', gpuUuid: a100.uuid, index: 0, name: a100.name },
      { type: 'gpu.added', gpuUuid: h100.uuid, index: 1, name: h100.name },
    ]);
  });

  it('ignores volatile readings (memory used, read time)', () => {
    const before = snapshotOf([deviceState(a100)]);
    const after = snapshotOf([deviceState(a100)]);
    const device = after.devices[0];
    if (device) device.memory = { totalBytes: 1, usedBytes: 1, freeBytes: 0 };
    after.readAt = new Date(Date.now() + 1000).toISOString();
    expect(diffSnapshots(before, after)).toEqual([]);
  });

  it('reports removed and added GPUs', () => {
    const events = diffSnapshots(snapshotOf([deviceState(a100)]), snapshotOf([deviceState(h100)]));
    expect(events.map((e) => [e.type, e.gpuUuid])).toEqual([
      ['gpu.added', h100.uuid],
      ['gpu.removed', a100.uuid],
    ]);
  });

  it('reports a destroyed and a created GPU instance as one mig.changed event', () => {
    const before = deviceState(a100);
    const after = deviceState(a100);
    const [first, , last] = after.mig.instances;
    if (!first || !last) throw new Error('fixture lost its instances');
    after.mig.instances = [first, { ...last, gpuInstanceId: 10, placement: { start: 5, size: 1 } }];
    const events = diffSnapshots(snapshotOf([before]), snapshotOf([after]));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'mig.changed', gpuUuid: a100.uuid });
    expect(events[0]?.type === 'mig.changed' && events[0].changes).toEqual([
      'instance 10 (profile 19) added',
      'instance 3 (profile 14) removed',
      'instance 9 (profile 19) removed',
    ]);
  });

  it('reports a MIG mode change, pending included', () => {
    const before = deviceState(a100);
    const after = deviceState(a100);
    after.mig.mode = { current: 1, pending: 0 };
    const [event] = diffSnapshots(snapshotOf([before]), snapshotOf([after]));
    expect(event?.type === 'mig.changed' && event.changes).toEqual(['pending mode 1→0']);
  });

  it('reports placements becoming unreadable as a profile change', () => {
    const [event] = diffSnapshots(snapshotOf([deviceState(a100)]), snapshotOf([deviceState(a100, { hidePlacements: true })]));
    expect(event?.type === 'mig.changed' && event.changes).toEqual(['profiles changed']);
  });

  it('reports a driver upgrade once per GPU, not a driver that became unreadable', () => {
    const devices = [deviceState(a100), deviceState(h100, {}, 1)];
    const upgraded = diffSnapshots(snapshotOf(devices, '570.86.15'), snapshotOf(devices, '580.95.05'));
    expect(upgraded).toEqual([
      { type: 'driver.changed', gpuUuid: a100.uuid, fromVersion: '570.86.15', toVersion: '580.95.05' },
      { type: 'driver.changed', gpuUuid: h100.uuid, fromVersion: '570.86.15', toVersion: '580.95.05' },
    ]);
    expect(diffSnapshots(snapshotOf(devices, '580.95.05'), snapshotOf(devices, null))).toEqual([]);
  });

  it('reports the GPUs as removed when NVML becomes unavailable', () => {
    const events = diffSnapshots(snapshotOf([deviceState(a100)]), UNAVAILABLE_SNAPSHOT('NVML_ERROR_DRIVER_NOT_LOADED'));
    expect(events).toEqual([{ type: 'gpu.removed', gpuUuid: a100.uuid }]);
  });
});
