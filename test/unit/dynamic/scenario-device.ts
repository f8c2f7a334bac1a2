/**
 * Builds NvmlDeviceState values from the fake-NVML scenario fixtures, so the
 * pure MIG/diff tests and the addon integration tests share one source of
 * profile tables.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DynamicSnapshot, MigInstanceInfo, MigProfileInfo, NvmlDeviceState } from '../../../server/dynamic/types.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/nvml');
const MIB = 1024 * 1024;

interface ScenarioProfile {
  id: number;
  name: string;
  sliceCount: number;
  instanceCount: number;
  multiprocessorCount: number;
  memorySizeMB: number;
  copyEngineCount: number;
  placements: Array<{ start: number; size: number }>;
}

interface ScenarioInstance {
  id: number;
  profileId: number;
  placement: { start: number; size: number };
  computeInstances: Array<{ id: number; multiprocessorCount: number }>;
  migDeviceUuid: string;
}

export interface ScenarioDevice {
  uuid: string;
  name: string;
  migMode: { current: number; pending: number };
  gpuInstanceProfiles: ScenarioProfile[];
  gpuInstances: ScenarioInstance[];
}

export interface Scenario {
  driverVersion: string;
  devices: ScenarioDevice[];
}

export function loadScenario(file: string): Scenario {
  return JSON.parse(readFileSync(path.join(FIXTURES, file), 'utf8')) as Scenario;
}

export function firstDevice(file: string): ScenarioDevice {
  const device = loadScenario(file).devices[0];
  if (!device) throw new Error(`${file} has no device`);
  return device;
}

export interface DeviceOptions {
  /** Profiles' possible placements unreadable (NO_PERMISSION). */
  hidePlacements?: boolean;
  /** Instances' placements unreadable (instances rebuilt from MIG devices). */
  hideInstancePlacements?: boolean;
}

export function deviceState(device: ScenarioDevice, options: DeviceOptions = {}, index = 0): NvmlDeviceState {
  const profiles: MigProfileInfo[] = device.gpuInstanceProfiles.map((p, profileIndex) => ({
    id: p.id,
    profileIndex,
    name: p.name,
    sliceCount: p.sliceCount,
    instanceCount: p.instanceCount,
    multiprocessorCount: p.multiprocessorCount,
    memorySizeBytes: p.memorySizeMB * MIB,
    copyEngineCount: p.copyEngineCount,
    placements: options.hidePlacements ? null : p.placements,
  }));
  const instances: MigInstanceInfo[] = device.gpuInstances.map((gi) => {
    const profile = profiles.find((p) => p.id === gi.profileId);
    return {
      gpuInstanceId: gi.id,
      profileId: gi.profileId,
      placement: options.hideInstancePlacements ? null : gi.placement,
      migDeviceUuid: gi.migDeviceUuid,
      memorySizeBytes: profile?.memorySizeBytes ?? null,
      multiprocessorCount: profile?.multiprocessorCount ?? null,
      computeInstances: gi.computeInstances.map((ci) => ({
        id: ci.id,
        profileId: null,
        multiprocessorCount: ci.multiprocessorCount,
        migDeviceUuid: gi.migDeviceUuid,
      })),
    };
  });
  const degraded = [
    ...(options.hidePlacements ? ['placements: NO_PERMISSION'] : []),
    ...(options.hideInstancePlacements ? ['gpuInstances: NO_PERMISSION'] : []),
  ];
  return {
    index,
    uuid: device.uuid,
    name: device.name,
    serial: null,
    pciBusId: null,
    architecture: null,
    memory: { totalBytes: 1, usedBytes: 0, freeBytes: 1 },
    bar1: null,
    maxClocks: { smMHz: null, memoryMHz: null },
    memoryBusWidthBits: null,
    pcie: { currentGen: null, maxGen: null, currentWidth: null, maxWidth: null },
    numaNode: null,
    cpuAffinity: null,
    nvlinks: [],
    mig: { mode: device.migMode, profiles, instances },
    degraded,
  };
}

export function snapshotOf(devices: NvmlDeviceState[], driverVersion: string | null = '580.95.05'): DynamicSnapshot {
  return { available: true, reason: null, driverVersion, cudaDriverVersion: 13000, devices, readAt: new Date().toISOString() };
}
