/**
 * Raw addon output → DynamicSnapshot. Pure: units converted (MiB → bytes),
 * codes named, MIG devices attached to their GPU instances, and — when NVML
 * refused to list GPU instances (unprivileged reader) — instances rebuilt from
 * the MIG device handles, which any reader may see, without placements.
 */
import { P2P_STATUSES, PCIE_ANCESTORS, type P2pStatus, type PcieAncestor } from '../model/node-schema.js';
import type {
  DynamicSnapshot,
  NvlinkRemoteType,
  NvmlDevicePair,
  MigComputeInstanceInfo,
  MigInstanceInfo,
  MigProfileInfo,
  NvmlDeviceState,
} from './types.js';
import type { RawDevice, RawDevicePair, RawGpuInstanceProfile, RawMigDevice, RawNvmlSnapshot } from './nvml-raw.js';

const MIB = 1024 * 1024;

/** nvmlDeviceArchitecture_t values (nvml.h NVML_DEVICE_ARCH_*). */
const ARCHITECTURES: Record<number, string> = {
  2: 'kepler',
  3: 'maxwell',
  4: 'pascal',
  5: 'volta',
  6: 'turing',
  7: 'ampere',
  8: 'ada',
  9: 'hopper',
  10: 'blackwell',
  11: 'orin',
};

export function architectureName(code: number | null): string | null {
  if (code === null) return null;
  return ARCHITECTURES[code] ?? 'unknown';
}

/** "MIG 3g.20gb" as NVML names it; synthesised for v1-only drivers that give no name. */
function profileName(profile: RawGpuInstanceProfile): string {
  if (profile.name) return profile.name;
  return `MIG ${profile.sliceCount}g.${Math.round(profile.memorySizeMB / 1024)}gb`;
}

function mapProfile(profile: RawGpuInstanceProfile): MigProfileInfo {
  return {
    id: profile.id,
    profileIndex: profile.profileIndex,
    name: profileName(profile),
    sliceCount: profile.sliceCount,
    instanceCount: profile.instanceCount,
    multiprocessorCount: profile.multiprocessorCount,
    memorySizeBytes: profile.memorySizeMB * MIB,
    copyEngineCount: profile.copyEngineCount,
    placements: profile.placements ? profile.placements.map((p) => ({ start: p.start, size: p.size })) : null,
  };
}

/** MIG devices of one GPU instance, by compute instance id. */
function migDevicesOf(raw: RawDevice, gpuInstanceId: number): RawMigDevice[] {
  return raw.migDevices
    .filter((m) => m.gpuInstanceId === gpuInstanceId)
    .sort((a, b) => (a.computeInstanceId ?? 0) - (b.computeInstanceId ?? 0));
}

function instancesFromNvml(raw: RawDevice, profiles: MigProfileInfo[]): MigInstanceInfo[] {
  return (raw.gpuInstances ?? []).map((gi) => {
    const profile = profiles.find((p) => p.id === gi.profileId);
    const migDevices = migDevicesOf(raw, gi.id);
    const migMemoryMB = migDevices[0]?.memorySizeMB ?? null;
    const listed: MigComputeInstanceInfo[] = gi.computeInstances.map((ci) => {
      const migDevice = migDevices.find((m) => m.computeInstanceId === ci.id);
      return {
        id: ci.id,
        profileId: ci.profileId,
        multiprocessorCount: ci.multiprocessorCount ?? migDevice?.multiprocessorCount ?? 0,
        migDeviceUuid: migDevice?.uuid ?? null,
      };
    });
    // A MIG device is a compute instance CUDA can open, even where NVML lists no compute instances for its GPU instance
    // (the compute-instance profile table NOT_SUPPORTED or refused): each one must stay addressable.
    const unlisted = migDevices
      .filter((m) => !gi.computeInstances.some((ci) => ci.id === m.computeInstanceId))
      .map(computeInstanceOfMigDevice);
    const computeInstances = [...listed, ...unlisted];
    return {
      gpuInstanceId: gi.id,
      profileId: gi.profileId,
      placement: gi.placement ? { start: gi.placement.start, size: gi.placement.size } : null,
      migDeviceUuid: migDevices[0]?.uuid ?? null,
      memorySizeBytes: profile?.memorySizeBytes ?? (migMemoryMB === null ? null : migMemoryMB * MIB),
      multiprocessorCount: profile?.multiprocessorCount ?? null,
      computeInstances,
    };
  });
}

/**
 * The profile a MIG device belongs to, from its slice count and memory. Twin
 * profiles (1g.10gb and 1g.10gb+me) look alike; the base profile (lowest
 * index) is the one most instances use.
 */
function matchProfile(migDevice: RawMigDevice, profiles: MigProfileInfo[]): MigProfileInfo | undefined {
  return profiles
    .filter((p) => p.sliceCount === migDevice.gpuInstanceSliceCount && p.memorySizeBytes === (migDevice.memorySizeMB ?? -1) * MIB)
    .sort((a, b) => a.profileIndex - b.profileIndex)[0];
}

function computeInstanceOfMigDevice(m: RawMigDevice): MigComputeInstanceInfo {
  return { id: m.computeInstanceId ?? 0, profileId: null, multiprocessorCount: m.multiprocessorCount ?? 0, migDeviceUuid: m.uuid };
}

function instancesFromMigDevices(raw: RawDevice, profiles: MigProfileInfo[], degraded: string[]): MigInstanceInfo[] {
  const ids = [...new Set(raw.migDevices.flatMap((m) => (m.gpuInstanceId === null ? [] : [m.gpuInstanceId])))].sort((a, b) => a - b);
  const instances: MigInstanceInfo[] = [];
  for (const id of ids) {
    const migDevices = migDevicesOf(raw, id);
    const first = migDevices[0];
    const profile = first && matchProfile(first, profiles);
    if (!first || !profile) {
      degraded.push(`gpuInstance[${id}].profile: NOT_IDENTIFIED`);
      continue;
    }
    instances.push({
      gpuInstanceId: id,
      profileId: profile.id,
      placement: null,
      migDeviceUuid: first.uuid,
      memorySizeBytes: first.memorySizeMB === null ? profile.memorySizeBytes : first.memorySizeMB * MIB,
      multiprocessorCount: profile.multiprocessorCount,
      computeInstances: migDevices.map(computeInstanceOfMigDevice),
    });
  }
  return instances;
}

export function mapDevice(raw: RawDevice): NvmlDeviceState {
  const degraded = [...raw.degraded];
  for (const m of raw.migDevices) for (const entry of m.degraded) degraded.push(`migDevices[${m.index}].${entry}`);
  const profiles = raw.profiles.map(mapProfile);
  const instances = raw.gpuInstances ? instancesFromNvml(raw, profiles) : instancesFromMigDevices(raw, profiles, degraded);
  return {
    index: raw.index,
    // A GPU whose UUID NVML refuses still exists; it gets a stable stand-in.
    uuid: raw.uuid ?? `nvml-index-${raw.index}`,
    name: raw.name ?? 'unknown NVIDIA GPU',
    serial: raw.serial,
    pciBusId: raw.pciBusId,
    architecture: architectureName(raw.architecture),
    memory: raw.memory,
    bar1: raw.bar1 && { totalBytes: raw.bar1.totalBytes, usedBytes: raw.bar1.usedBytes },
    maxClocks: { smMHz: raw.maxSmClockMHz, memoryMHz: raw.maxMemoryClockMHz },
    memoryBusWidthBits: raw.memoryBusWidthBits,
    pcie: {
      currentGen: raw.pcieCurrentGen,
      maxGen: raw.pcieMaxGen,
      currentWidth: raw.pcieCurrentWidth,
      maxWidth: raw.pcieMaxWidth,
    },
    numaNode: raw.numaNode,
    cpuAffinity: raw.cpuAffinity,
    nvlinks: raw.nvlinks.map((l) => ({ link: l.link, remotePciBusId: l.remotePciBusId })),
    nvlinkRemoteTypes: raw.nvlinks.map((l) => ({ link: l.link, type: nvlinkRemoteType(l.remoteDeviceType ?? null) })),
    mig: {
      mode: raw.migModeCurrent === null ? null : { current: raw.migModeCurrent, pending: raw.migModePending ?? raw.migModeCurrent },
      profiles,
      instances,
    },
    degraded,
  };
}

/** nvmlIntNvLinkDeviceType_t by name. */
export function nvlinkRemoteType(code: number | null): NvlinkRemoteType | null {
  if (code === null) return null;
  return code === 0 ? 'gpu' : code === 1 ? 'ibmnpu' : code === 2 ? 'switch' : 'unknown';
}

/** nvmlGpuTopologyLevel_t (0, 10, …, 50) by name; an unknown level is null. */
export function pcieAncestor(code: number | null): PcieAncestor | null {
  if (code === null || code % 10 !== 0) return null;
  return PCIE_ANCESTORS[code / 10] ?? null;
}

export function p2pStatus(code: number | null): P2pStatus | null {
  if (code === null) return null;
  return P2P_STATUSES[code] ?? 'unknown';
}

function mapPair(pair: RawDevicePair, devices: NvmlDeviceState[]): NvmlDevicePair | null {
  const a = devices.find((d) => d.index === pair.a);
  const b = devices.find((d) => d.index === pair.b);
  if (!a || !b) return null;
  return {
    gpus: [a.uuid, b.uuid],
    commonAncestor: pcieAncestor(pair.commonAncestor),
    p2p: {
      read: p2pStatus(pair.p2pRead),
      write: p2pStatus(pair.p2pWrite),
      nvlink: p2pStatus(pair.p2pNvlink),
      atomics: p2pStatus(pair.p2pAtomics),
    },
    degraded: [...pair.degraded],
  };
}

export function toDynamicSnapshot(raw: RawNvmlSnapshot, readAt: Date = new Date()): DynamicSnapshot {
  const devices = raw.devices.map(mapDevice);
  return {
    available: true,
    reason: null,
    driverVersion: raw.driverVersion,
    cudaDriverVersion: raw.cudaDriverVersion,
    devices,
    ...(raw.pairs ? { links: raw.pairs.flatMap((p) => mapPair(p, devices) ?? []) } : {}),
    readAt: readAt.toISOString(),
  };
}
