/**
 * The MIG view of one GPU: what each GPU-instance profile would give and what
 * each existing instance has — SMs, memory, and its share of L2.
 *
 * L2 follows memory: a MIG instance owns the L2 slices in front of its memory
 * slices, so its share is L2 × (its memory slices ÷ the GPU's memory slices).
 * The GPU's memory-slice count is the placement size of the full-GPU profile
 * (8 on A100/H100/H200 — read from NVML, never assumed). Without readable
 * placements the slice counts come from memory ratios and the share says
 * `source: "derived"`. What one SM can actually reach is further capped by
 * the L2 segment (partition) size the probe measured.
 */
import type { DynamicSnapshot, MigComputeInstanceInfo, MigInstanceInfo, MigProfileInfo, NvmlDeviceState } from '../dynamic/types.js';
import type { ComputeTopology } from '../model/compute-schema.js';
import type { MigComputeInstanceView, MigL2Share, MigL2Source, MigModeName, MigView } from '../model/document.js';
import type { MigClusterShareView } from '../model/mig-schema.js';

export interface BuildMigViewParams {
  device: NvmlDeviceState;
  l2SizeBytes: number | null;
  l2SegmentBytes: number | null;
  /** L2 partitions the probe measured (l2.partitions.count); null when not measured. */
  l2PartitionCount?: number | null;
  /** The parent's measured compute section: each profile's and instance's cluster share follows from it. */
  compute?: ComputeTopology | null;
}

interface SliceTotal {
  count: number;
  source: MigL2Source;
  fullProfile: MigProfileInfo;
}

const modeName = (mode: number): MigModeName => (mode === 1 ? 'enabled' : 'disabled');

/** The profile spanning the whole GPU: most compute slices, then most memory. */
function fullGpuProfile(profiles: MigProfileInfo[]): MigProfileInfo | undefined {
  return [...profiles].sort((a, b) => b.sliceCount - a.sliceCount || b.memorySizeBytes - a.memorySizeBytes)[0];
}

/**
 * The GPU's memory-slice count: the full profile's placement size, or —
 * placements unreadable — full memory ÷ the smallest profile's memory.
 */
export function memorySliceTotal(profiles: MigProfileInfo[]): SliceTotal | null {
  const fullProfile = fullGpuProfile(profiles);
  if (!fullProfile) return null;
  const size = fullProfile.placements?.[0]?.size;
  if (size) return { count: size, source: 'nvml', fullProfile };
  const smallest = Math.min(...profiles.map((p) => p.memorySizeBytes).filter((bytes) => bytes > 0));
  if (!Number.isFinite(smallest) || fullProfile.memorySizeBytes <= 0) return null;
  return { count: Math.max(1, Math.round(fullProfile.memorySizeBytes / smallest)), source: 'derived', fullProfile };
}

/** Memory slices an instance of `memoryBytes` holds, by memory ratio, rounded to the nearest slice. */
function slicesByMemory(memoryBytes: number, total: SliceTotal): number {
  return Math.min(total.count, Math.max(1, Math.round((memoryBytes / total.fullProfile.memorySizeBytes) * total.count)));
}

/**
 * Partitions a run of memory slices lies in: the GPU's slices split evenly
 * across the measured partitions, in slice order. Without a placement (a
 * profile), the run is taken aligned at a partition boundary, as NVML's
 * placements are.
 */
export function partitionsSpanned(
  slices: { count: number; start?: number },
  totalSlices: number,
  partitionCount: number | null,
): number | null {
  if (partitionCount === null || partitionCount < 1 || totalSlices < partitionCount) return null;
  const perPartition = totalSlices / partitionCount;
  const start = slices.start ?? 0;
  const first = Math.floor(start / perPartition);
  const last = Math.floor((start + Math.max(1, slices.count) - 1) / perPartition);
  return Math.min(partitionCount, last - first + 1);
}

export function l2Share(
  slices: { count: number; source: MigL2Source; start?: number },
  total: SliceTotal,
  l2SizeBytes: number | null,
  l2SegmentBytes: number | null,
  l2PartitionCount: number | null = null,
): MigL2Share {
  const bytes = l2SizeBytes === null ? null : Math.round((l2SizeBytes * slices.count) / total.count);
  return {
    bytes,
    memorySlices: slices.count,
    source: slices.source === 'nvml' && total.source === 'nvml' ? 'nvml' : 'derived',
    reachablePerSmBytes: bytes === null || l2SegmentBytes === null ? null : Math.min(bytes, l2SegmentBytes),
    partitions: partitionsSpanned(slices, total.count, l2PartitionCount),
  };
}

function profileSlices(profile: MigProfileInfo, total: SliceTotal): { count: number; source: MigL2Source } {
  const size = profile.placements?.[0]?.size;
  return size ? { count: size, source: 'nvml' } : { count: slicesByMemory(profile.memorySizeBytes, total), source: 'derived' };
}

function instanceSlices(
  instance: MigInstanceInfo,
  profile: MigProfileInfo | undefined,
  total: SliceTotal,
): { count: number; source: MigL2Source; start?: number } {
  if (instance.placement) return { count: instance.placement.size, source: 'nvml', start: instance.placement.start };
  const memory = instance.memorySizeBytes ?? profile?.memorySizeBytes ?? null;
  if (memory !== null) return { count: slicesByMemory(memory, total), source: 'derived' };
  return profile ? profileSlices(profile, total) : { count: 1, source: 'derived' };
}

/**
 * What a GPU instance of a profile can launch, derived (not measured) from the
 * parent's compute section. MIG gives each compute slice (the "N" of an "Ng"
 * profile) SMs of one GPC, so the instance has `computeSlices` GPCs of about
 * smCount / computeSlices SMs each (never more than the parent's largest GPC),
 * and the largest cluster it can launch is that, capped by the parent's
 * largest cluster. null when the parent has no measured GPC map or no
 * clusters. NVML does not say which SMs an instance holds, so this is
 * `derived`.
 */
export function migClusterShare(parent: ComputeTopology, instance: { smCount: number; computeSlices: number }): MigClusterShareView | null {
  const maxCluster = parent.clusters.maxClusterSize?.value;
  if (!parent.gpcs || !parent.clusters.supported || maxCluster === undefined || instance.computeSlices < 1) return null;
  const largestGpc = Math.max(...parent.gpcs.smsPerGpc);
  const smsPerGpc = Math.min(largestGpc, Math.floor(instance.smCount / instance.computeSlices));
  return { gpcCount: instance.computeSlices, smsPerGpc, largestCluster: Math.min(maxCluster, smsPerGpc), source: 'derived' };
}

function computeInstanceView(ci: MigComputeInstanceInfo): MigComputeInstanceView {
  return { id: ci.id, profileId: ci.profileId, multiprocessorCount: ci.multiprocessorCount, migDeviceUuid: ci.migDeviceUuid ?? null };
}

export function buildMigView({
  device,
  l2SizeBytes,
  l2SegmentBytes,
  l2PartitionCount = null,
  compute = null,
}: BuildMigViewParams): MigView {
  const { mode, profiles, instances } = device.mig;
  const clusters = (smCount: number | null, computeSlices: number | undefined) =>
    compute && smCount !== null && computeSlices !== undefined ? migClusterShare(compute, { smCount, computeSlices }) : null;
  const total = memorySliceTotal(profiles);
  const unknownShare: MigL2Share = { bytes: null, memorySlices: 0, source: 'derived', reachablePerSmBytes: null, partitions: null };
  return {
    mode: mode ? { current: modeName(mode.current), pending: modeName(mode.pending) } : null,
    memorySliceCount: total?.count ?? null,
    memorySliceSource: total?.source ?? null,
    l2SizeBytes,
    l2SegmentBytes,
    profiles: profiles.map((profile) => ({
      ...profile,
      l2: total ? l2Share(profileSlices(profile, total), total, l2SizeBytes, l2SegmentBytes, l2PartitionCount) : unknownShare,
      clusters: clusters(profile.multiprocessorCount, profile.sliceCount),
    })),
    instances: instances.map((instance) => {
      const profile = profiles.find((p) => p.id === instance.profileId);
      const multiprocessorCount = instance.multiprocessorCount ?? profile?.multiprocessorCount ?? null;
      return {
        migDeviceUuid: instance.migDeviceUuid,
        gpuInstanceId: instance.gpuInstanceId,
        profileId: instance.profileId,
        profileName: profile?.name ?? null,
        placement: instance.placement,
        multiprocessorCount,
        memorySizeBytes: instance.memorySizeBytes ?? profile?.memorySizeBytes ?? null,
        computeInstances: instance.computeInstances.map(computeInstanceView),
        l2: total ? l2Share(instanceSlices(instance, profile, total), total, l2SizeBytes, l2SegmentBytes, l2PartitionCount) : unknownShare,
        clusters: clusters(multiprocessorCount, profile?.sliceCount),
      };
    }),
  };
}

export interface MigInstanceMatch {
  device: NvmlDeviceState;
  instance: MigInstanceInfo;
  /** Set when the UUID names one compute instance's MIG device. */
  computeInstance: MigComputeInstanceInfo | null;
}

/** The GPU and GPU instance behind a MIG device UUID (case-insensitive); null when no GPU has it. */
export function findMigInstance(snapshot: DynamicSnapshot, migUuid: string): MigInstanceMatch | null {
  const wanted = migUuid.toLowerCase();
  const same = (uuid: string | null | undefined) => !!uuid && uuid.toLowerCase() === wanted;
  for (const device of snapshot.devices) {
    for (const instance of device.mig.instances) {
      const computeInstance = instance.computeInstances.find((ci) => same(ci.migDeviceUuid)) ?? null;
      if (computeInstance || same(instance.migDeviceUuid)) return { device, instance, computeInstance };
    }
  }
  return null;
}
