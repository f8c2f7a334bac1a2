/**
 * What changed between two NVML snapshots, as events a consumer acts on.
 * Pure. Only state a scheduler cares about counts: GPUs present, MIG mode and
 * partitioning, the driver version (it keys cached probe results). Volatile
 * readings (memory used, read time) never produce events.
 */
import type { DynamicSnapshot, MigInstanceInfo, NvmlDeviceState } from './types.js';

interface EventBase {
  /** The GPU the event is about (driver changes are reported per GPU: they key its cached results). */
  gpuUuid: string;
}

export interface GpuAddedEvent extends EventBase {
  type: 'gpu.added';
  index: number;
  name: string;
}

export interface GpuRemovedEvent extends EventBase {
  type: 'gpu.removed';
}

export interface MigChangedEvent extends EventBase {
  type: 'mig.changed';
  /** Human-readable list: "mode 0→1", "instance 3 (profile 14) added", ... */
  changes: string[];
}

export interface DriverChangedEvent extends EventBase {
  type: 'driver.changed';
  fromVersion: string | null;
  toVersion: string | null;
}

export type DynamicEvent = GpuAddedEvent | GpuRemovedEvent | MigChangedEvent | DriverChangedEvent;
export type DynamicEventType = DynamicEvent['type'];

function placementKey(p: { start: number; size: number } | null): string {
  return p ? `${p.start}+${p.size}` : '?';
}

/** How many placements each profile offers (or that they could not be read). */
function placementCountsKey(device: NvmlDeviceState): string {
  return device.mig.profiles.map((p) => `${p.id}:${p.placements === null ? 'unreadable' : p.placements.length}`).join(',');
}

function instanceKey(i: MigInstanceInfo): string {
  const cis = i.computeInstances.map((c) => `${c.id}:${c.profileId ?? '?'}:${c.multiprocessorCount}:${c.migDeviceUuid ?? ''}`);
  return `${i.profileId}@${placementKey(i.placement)}/${i.migDeviceUuid ?? ''}/${cis.join(',')}`;
}

/** Differences in one GPU's MIG state; empty when nothing a consumer acts on changed. */
export function migChanges(before: NvmlDeviceState, after: NvmlDeviceState): string[] {
  const changes: string[] = [];
  const beforeMode = before.mig.mode;
  const afterMode = after.mig.mode;
  if (beforeMode?.current !== afterMode?.current) changes.push(`mode ${beforeMode?.current ?? 'n/a'}→${afterMode?.current ?? 'n/a'}`);
  if (beforeMode?.pending !== afterMode?.pending)
    changes.push(`pending mode ${beforeMode?.pending ?? 'n/a'}→${afterMode?.pending ?? 'n/a'}`);
  const old = new Map(before.mig.instances.map((i) => [i.gpuInstanceId, i]));
  const next = new Map(after.mig.instances.map((i) => [i.gpuInstanceId, i]));
  for (const [id, instance] of next) {
    const previous = old.get(id);
    if (!previous) changes.push(`instance ${id} (profile ${instance.profileId}) added`);
    else if (instanceKey(previous) !== instanceKey(instance)) changes.push(`instance ${id} changed`);
  }
  for (const [id, instance] of old) if (!next.has(id)) changes.push(`instance ${id} (profile ${instance.profileId}) removed`);
  if (placementCountsKey(before) !== placementCountsKey(after)) changes.push('profiles changed');
  return changes;
}

/** Events that turn `before` into `after` (before = null: everything in `after` is new). */
export function diffSnapshots(before: DynamicSnapshot | null, after: DynamicSnapshot): DynamicEvent[] {
  const events: DynamicEvent[] = [];
  const old = new Map((before?.devices ?? []).map((d) => [d.uuid, d]));
  const next = new Map(after.devices.map((d) => [d.uuid, d]));
  for (const [uuid, device] of next) {
    const previous = old.get(uuid);
    if (!previous) {
      events.push({ type: 'gpu.added', gpuUuid: uuid, index: device.index, name: device.name });
      continue;
    }
    const changes = migChanges(previous, device);
    if (changes.length > 0) events.push({ type: 'mig.changed', gpuUuid: uuid, changes });
    // Both sides must have read it: a driver version that became unreadable is not an upgrade.
    if (before?.driverVersion && after.driverVersion && before.driverVersion !== after.driverVersion) {
      events.push({ type: 'driver.changed', gpuUuid: uuid, fromVersion: before.driverVersion, toVersion: after.driverVersion });
    }
  }
  for (const uuid of old.keys()) if (!next.has(uuid)) events.push({ type: 'gpu.removed', gpuUuid: uuid });
  return events;
}
