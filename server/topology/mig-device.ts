/**
 * The summary of one MIG device (`GET /v1/gpus/{MIG-uuid}`): the GPU
 * instance — and compute instance — its UUID names, read from the parent's
 * MIG view, so its SMs, memory and L2 share are the numbers the topology
 * documents show for it.
 */
import type { GpuSummary, MigDeviceSummary } from '../model/gpu.js';
import type { MigView } from '../model/document.js';

/** null when the view has no instance with that MIG device UUID (any case). */
export function migDeviceSummary(parent: GpuSummary, view: MigView, migDeviceUuid: string): MigDeviceSummary | null {
  const wanted = migDeviceUuid.toLowerCase();
  const same = (uuid: string | null): boolean => uuid !== null && uuid.toLowerCase() === wanted;
  for (const instance of view.instances) {
    // Every compute instance is a MIG device of its own; the GPU instance's UUID is its first compute instance's.
    const computeInstance = instance.computeInstances.find((ci) => same(ci.migDeviceUuid)) ?? null;
    if (!computeInstance && !same(instance.migDeviceUuid)) continue;
    return {
      kind: 'mig-device',
      uuid: computeInstance?.migDeviceUuid ?? instance.migDeviceUuid ?? migDeviceUuid,
      parent: { uuid: parent.uuid, index: parent.index, name: parent.name },
      gpuInstanceId: instance.gpuInstanceId,
      computeInstanceId: computeInstance?.id ?? null,
      profileId: instance.profileId,
      profileName: instance.profileName,
      placement: instance.placement,
      multiprocessorCount: computeInstance?.multiprocessorCount ?? instance.multiprocessorCount,
      memorySizeBytes: instance.memorySizeBytes,
      l2: instance.l2,
      simulated: parent.simulated,
    };
  }
  return null;
}
