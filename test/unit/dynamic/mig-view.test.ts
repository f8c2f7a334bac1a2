import { describe, expect, it } from 'vitest';
import { buildMigView, findMigInstance, memorySliceTotal, partitionsSpanned } from '../../../server/topology/mig.js';
import { deviceState, firstDevice, snapshotOf } from './scenario-device.js';
import { GPU_MODELS } from '../../../server/gpu/sim/index.js';
import { measureCompute, openSimulated } from '../../helpers/sim-channel.js';

const MIB = 1024 * 1024;
// Test inputs for the arithmetic (what a probe would have measured), not expectations.
const L2_40_MIB = 40 * MIB;
const SEGMENT_20_MIB = 20 * MIB;
const L2_50_MIB = 50 * MIB;
const SEGMENT_25_MIB = 25 * MIB;

const a100 = firstDevice('a100-40gb-mig-mixed.json');
const h100 = firstDevice('h100-80gb-mig-mixed.json');

function instanceByProfile(view: ReturnType<typeof buildMigView>, profileName: string) {
  const instance = view.instances.find((i) => i.profileName === profileName);
  if (!instance) throw new Error(`no ${profileName} instance in the view`);
  return instance;
}

describe('buildMigView: L2 share from NVML placements', () => {
  const view = buildMigView({ device: deviceState(a100), l2SizeBytes: L2_40_MIB, l2SegmentBytes: SEGMENT_20_MIB });

  it('takes the GPU memory-slice count from the full profile placement', () => {
    expect(view.memorySliceCount).toBe(8);
    expect(view.memorySliceSource).toBe('nvml');
  });

  it('gives an A100 1g.5gb instance exactly one eighth of a 40 MiB L2', () => {
    const oneG = instanceByProfile(view, 'MIG 1g.5gb');
    expect(oneG.l2).toEqual({ bytes: 5 * MIB, memorySlices: 1, source: 'nvml', reachablePerSmBytes: 5 * MIB, partitions: null });
    expect(oneG.l2.bytes).toBe(L2_40_MIB / 8);
  });

  it('gives 3g.20gb four slices (the 3g profile occupies 4 memory slices) and 2g.10gb two', () => {
    expect(instanceByProfile(view, 'MIG 3g.20gb').l2.bytes).toBe(20 * MIB);
    expect(instanceByProfile(view, 'MIG 2g.10gb').l2.bytes).toBe(10 * MIB);
  });

  it('caps the per-SM reachable L2 at the segment size', () => {
    const full = view.profiles.find((p) => p.name === 'MIG 7g.40gb');
    expect(full?.l2.bytes).toBe(L2_40_MIB);
    expect(full?.l2.reachablePerSmBytes).toBe(SEGMENT_20_MIB);
  });

  it('carries instance identity, SMs, memory and compute instances', () => {
    const threeG = instanceByProfile(view, 'MIG 3g.20gb');
    expect(threeG).toMatchObject({
      gpuInstanceId: 2,
      profileId: 9,
      placement: { start: 0, size: 4 },
      multiprocessorCount: 42,
      memorySizeBytes: 19968 * MIB,
      migDeviceUuid: a100.gpuInstances[0]?.migDeviceUuid,
    });
    expect(threeG.computeInstances).toHaveLength(1);
    expect(view.mode).toEqual({ current: 'enabled', pending: 'enabled' });
  });

  it('computes H100 shares of a 50 MiB L2 (1/8, 2/8, 4/8)', () => {
    const h = buildMigView({ device: deviceState(h100), l2SizeBytes: L2_50_MIB, l2SegmentBytes: SEGMENT_25_MIB });
    expect(instanceByProfile(h, 'MIG 1g.10gb').l2.bytes).toBe(L2_50_MIB / 8);
    expect(instanceByProfile(h, 'MIG 2g.20gb').l2.bytes).toBe(L2_50_MIB / 4);
    expect(instanceByProfile(h, 'MIG 3g.40gb').l2).toMatchObject({ bytes: L2_50_MIB / 2, reachablePerSmBytes: SEGMENT_25_MIB });
    expect(h.profiles.find((p) => p.name === 'MIG 1g.20gb')?.l2).toMatchObject({ bytes: L2_50_MIB / 4, memorySlices: 2 });
  });
});

describe('buildMigView: derived shares without readable placements', () => {
  it('derives the slice count from memory ratios when placements are NO_PERMISSION', () => {
    const device = deviceState(a100, { hidePlacements: true });
    const view = buildMigView({ device, l2SizeBytes: L2_40_MIB, l2SegmentBytes: SEGMENT_20_MIB });
    expect(view.memorySliceCount).toBe(8);
    expect(view.memorySliceSource).toBe('derived');
    expect(instanceByProfile(view, 'MIG 1g.5gb').l2).toEqual({
      bytes: 5 * MIB,
      memorySlices: 1,
      source: 'derived',
      reachablePerSmBytes: 5 * MIB,
      partitions: null,
    });
    expect(view.profiles.every((p) => p.l2.source === 'derived')).toBe(true);
  });

  it('rounds instance memory to the nearest slice when instance placements are unknown too', () => {
    const device = deviceState(a100, { hidePlacements: true, hideInstancePlacements: true });
    const view = buildMigView({ device, l2SizeBytes: L2_40_MIB, l2SegmentBytes: null });
    const shares = view.instances.map((i) => [i.profileName, i.l2.memorySlices, i.l2.bytes, i.l2.source]);
    expect(shares).toEqual([
      ['MIG 3g.20gb', 4, 20 * MIB, 'derived'],
      ['MIG 2g.10gb', 2, 10 * MIB, 'derived'],
      ['MIG 1g.5gb', 1, 5 * MIB, 'derived'],
    ]);
    expect(view.instances.every((i) => i.l2.reachablePerSmBytes === null)).toBe(true);
  });

  it('marks a share derived when only the instance placement is readable', () => {
    const device = deviceState(h100, { hidePlacements: true });
    const view = buildMigView({ device, l2SizeBytes: L2_50_MIB, l2SegmentBytes: null });
    expect(instanceByProfile(view, 'MIG 3g.40gb').l2).toMatchObject({ memorySlices: 4, source: 'derived', bytes: L2_50_MIB / 2 });
  });
});

describe('buildMigView: edges', () => {
  it('lists every profile with its share when MIG is off', () => {
    const off = firstDevice('h100-80gb-mig-off.json');
    const view = buildMigView({ device: deviceState(off), l2SizeBytes: L2_50_MIB, l2SegmentBytes: SEGMENT_25_MIB });
    expect(view.mode).toEqual({ current: 'disabled', pending: 'disabled' });
    expect(view.instances).toEqual([]);
    expect(view.profiles).toHaveLength(off.gpuInstanceProfiles.length);
    expect(view.profiles.map((p) => p.l2.memorySlices)).toEqual(off.gpuInstanceProfiles.map((p) => p.placements[0]?.size));
  });

  it('keeps slice counts but no bytes when the L2 size is unknown', () => {
    const view = buildMigView({ device: deviceState(a100), l2SizeBytes: null, l2SegmentBytes: SEGMENT_20_MIB });
    expect(instanceByProfile(view, 'MIG 3g.20gb').l2).toEqual({
      bytes: null,
      memorySlices: 4,
      source: 'nvml',
      reachablePerSmBytes: null,
      partitions: null,
    });
  });

  it('takes the slice count from the profile list, not a constant', () => {
    const device = deviceState(a100);
    // A hypothetical part whose full profile spans 4 memory slices.
    device.mig.profiles = device.mig.profiles.map((p) => ({
      ...p,
      placements: p.placements?.map((pl) => ({ start: pl.start, size: Math.min(pl.size, 4) })) ?? null,
    }));
    expect(memorySliceTotal(device.mig.profiles)?.count).toBe(4);
    const view = buildMigView({ device, l2SizeBytes: L2_40_MIB, l2SegmentBytes: null });
    expect(instanceByProfile(view, 'MIG 1g.5gb').l2.bytes).toBe(L2_40_MIB / 4);
  });

  it('gives an empty view for a GPU without MIG', () => {
    const device = deviceState(a100);
    device.mig = { mode: null, profiles: [], instances: [] };
    const view = buildMigView({ device, l2SizeBytes: L2_40_MIB, l2SegmentBytes: null });
    expect(view).toMatchObject({ mode: null, memorySliceCount: null, profiles: [], instances: [] });
  });
});

describe('findMigInstance', () => {
  const snapshot = snapshotOf([deviceState(a100), deviceState(h100, {}, 1)]);
  const target = h100.gpuInstances[1];

  it('finds the GPU and instance behind a MIG UUID, ignoring case', () => {
    const match = findMigInstance(snapshot, target?.migDeviceUuid.toUpperCase() ?? '');
    expect(match?.device.uuid).toBe(h100.uuid);
    expect(match?.instance.gpuInstanceId).toBe(target?.id);
    expect(match?.computeInstance?.id).toBe(0);
  });

  it('returns null for an unknown UUID', () => {
    expect(findMigInstance(snapshot, 'MIG-00000000-0000-0000-0000-000000000000')).toBeNull();
  });
});

describe('buildMigView: thread block clusters per profile and instance', () => {
  // The simulated H100's compute section, measured through the same discovery code a GPU runs.
  const simulatedH100Compute = async () => {
    const channel = await openSimulated(GPU_MODELS['h100-sxm5-80gb']!, 2);
    const { compute } = await measureCompute(channel);
    await channel.close();
    return compute;
  };

  it('derives each profile’s and instance’s GPCs and largest cluster from the measured parent, and null without it', async () => {
    const compute = await simulatedH100Compute();
    const largestGpc = Math.max(...compute.gpcs!.smsPerGpc);
    const view = buildMigView({ device: deviceState(h100), l2SizeBytes: L2_50_MIB, l2SegmentBytes: SEGMENT_25_MIB, compute });
    for (const profile of view.profiles) {
      const smsPerGpc = Math.min(largestGpc, Math.floor(profile.multiprocessorCount / profile.sliceCount));
      expect(profile.clusters, profile.name).toEqual({
        gpcCount: profile.sliceCount,
        smsPerGpc,
        largestCluster: Math.min(compute.clusters.maxClusterSize!.value, smsPerGpc),
        source: 'derived',
      });
    }
    const oneG = instanceByProfile(view, 'MIG 1g.10gb');
    expect(oneG.clusters?.gpcCount).toBe(1);
    expect(oneG.clusters?.largestCluster).toBeLessThanOrEqual(oneG.multiprocessorCount!);
    const without = buildMigView({ device: deviceState(h100), l2SizeBytes: L2_50_MIB, l2SegmentBytes: SEGMENT_25_MIB });
    expect(without.profiles.every((p) => p.clusters === null)).toBe(true);
    expect(without.instances.every((i) => i.clusters === null)).toBe(true);
  });
});

describe('buildMigView: the L2 partitions a share lies in (the measured partition count, slices split evenly in order)', () => {
  it('counts the partitions a run of slices touches, aligned for a profile, from its placement for an instance', () => {
    expect(partitionsSpanned({ count: 8 }, 8, 2)).toBe(2);
    expect(partitionsSpanned({ count: 4 }, 8, 2)).toBe(1);
    expect(partitionsSpanned({ count: 4, start: 4 }, 8, 2)).toBe(1);
    expect(partitionsSpanned({ count: 2, start: 3 }, 8, 2)).toBe(2); // straddles the boundary
    expect(partitionsSpanned({ count: 1, start: 7 }, 8, 2)).toBe(1);
    expect(partitionsSpanned({ count: 8 }, 8, 1)).toBe(1);
    expect(partitionsSpanned({ count: 4 }, 8, null)).toBeNull();
    expect(partitionsSpanned({ count: 1 }, 1, 2)).toBeNull(); // fewer slices than partitions: no even split
  });

  for (const [label, device, l2, segment] of [
    ['A100', a100, L2_40_MIB, SEGMENT_20_MIB],
    ['H100', h100, L2_50_MIB, SEGMENT_25_MIB],
  ] as const) {
    it(`${label}: the full profile spans both partitions, smaller instances one, and the reachable L2 is the near part`, () => {
      const view = buildMigView({ device: deviceState(device), l2SizeBytes: l2, l2SegmentBytes: segment, l2PartitionCount: 2 });
      const total = view.memorySliceCount!;
      for (const profile of view.profiles) {
        expect(profile.l2.partitions, profile.name).toBe(profile.l2.memorySlices > total / 2 ? 2 : 1);
      }
      for (const instance of view.instances) {
        const { start, size } = instance.placement!;
        const expected = Math.floor(start / (total / 2)) === Math.floor((start + size - 1) / (total / 2)) ? 1 : 2;
        expect(instance.l2.partitions, instance.profileName ?? '').toBe(expected);
        // One SM caches in its near partition: it reaches the share when the share lies in one partition, one partition's worth when it spans two.
        expect(instance.l2.reachablePerSmBytes).toBe(Math.min(instance.l2.bytes!, segment));
      }
      const without = buildMigView({ device: deviceState(device), l2SizeBytes: l2, l2SegmentBytes: segment });
      expect(without.profiles.every((p) => p.l2.partitions === null)).toBe(true);
    });
  }
});
