import type { DynamicSnapshot } from '../dynamic/types.js';
import type { GpuIdentity } from '../model/gpu.js';

export interface RegisteredGpu {
  identity: GpuIdentity;
  /** Still visible to NVML / the backend right now. */
  present: boolean;
}

export interface UpsertOutcome {
  added: boolean;
  /** It was known but absent, and is back. */
  returned: boolean;
  driverChanged: boolean;
}

/** A resolved `{id}`: the GPU, and the MIG device when a MIG UUID was asked for. */
export interface ResolvedGpu {
  gpu: RegisteredGpu;
  migDeviceUuid: string | null;
}

/**
 * Which GPUs exist and how a client may name them: index among present GPUs,
 * GPU UUID, or the UUID of any MIG device — every compute instance of a GPU
 * instance is its own MIG device (CUDA_VISIBLE_DEVICES=MIG-…), not only the first.
 */
export class GpuRegistry {
  private readonly gpus = new Map<string, RegisteredGpu>();
  /** When each GPU was last upserted: of two present GPUs claiming one index, the later word wins. */
  private readonly upsertedAt = new Map<string, number>();
  private upserts = 0;
  /** lower-case MIG device UUID → the parent GPU's UUID and the MIG UUID as NVML spells it */
  private readonly migDevices = new Map<string, { gpuUuid: string; migDeviceUuid: string }>();
  private readonly migDevicesByGpu = new Map<string, string[]>();

  upsert(identity: GpuIdentity): UpsertOutcome {
    this.upsertedAt.set(identity.uuid, ++this.upserts);
    const known = this.gpus.get(identity.uuid);
    if (!known) {
      this.gpus.set(identity.uuid, { identity, present: true });
      return { added: true, returned: false, driverChanged: false };
    }
    const driverChanged = known.identity.driverVersion !== identity.driverVersion;
    const returned = !known.present;
    known.identity = identity;
    known.present = true;
    return { added: false, returned, driverChanged };
  }

  /**
   * Marks every present GPU not in `seen` absent, and keeps indices unique
   * among present GPUs: where two claim one index (a GPU swapped for another
   * in its slot, both remembered while NVML is down), the one upserted last
   * stays and the other is absent. Returns the UUIDs marked absent.
   */
  markAbsentExcept(seen: ReadonlySet<string>): string[] {
    const removed: string[] = [];
    for (const [uuid, gpu] of this.gpus) {
      if (seen.has(uuid) || !gpu.present) continue;
      gpu.present = false;
      removed.push(uuid);
    }
    const byIndex = new Map<number, RegisteredGpu>();
    const upsertedAt = (gpu: RegisteredGpu) => this.upsertedAt.get(gpu.identity.uuid) ?? 0;
    for (const gpu of [...this.gpus.values()].filter((g) => g.present).sort((a, b) => upsertedAt(b) - upsertedAt(a))) {
      if (!byIndex.has(gpu.identity.index)) {
        byIndex.set(gpu.identity.index, gpu);
        continue;
      }
      gpu.present = false;
      removed.push(gpu.identity.uuid);
    }
    return removed;
  }

  /** The MIG devices of the snapshot: every GPU instance's compute instances. */
  setMigDevices(snapshot: DynamicSnapshot): void {
    this.migDevices.clear();
    this.migDevicesByGpu.clear();
    for (const device of snapshot.devices) {
      const uuids = new Set<string>();
      for (const instance of device.mig.instances) {
        if (instance.migDeviceUuid) uuids.add(instance.migDeviceUuid);
        for (const ci of instance.computeInstances) if (ci.migDeviceUuid) uuids.add(ci.migDeviceUuid);
      }
      this.migDevicesByGpu.set(device.uuid, [...uuids]);
      for (const uuid of uuids) this.migDevices.set(uuid.toLowerCase(), { gpuUuid: device.uuid, migDeviceUuid: uuid });
    }
  }

  migDeviceUuids(gpuUuid: string): string[] {
    return this.migDevicesByGpu.get(gpuUuid) ?? [];
  }

  get(uuid: string): RegisteredGpu | undefined {
    return this.gpus.get(uuid);
  }

  all(): RegisteredGpu[] {
    return [...this.gpus.values()];
  }

  uuids(): string[] {
    return [...this.gpus.keys()];
  }

  /** `id`: an index among present GPUs, a GPU UUID, or a MIG device UUID (case-insensitive). */
  resolve(id: string): ResolvedGpu | null {
    if (/^\d+$/.test(id)) {
      const index = Number(id);
      const gpu = this.all().find((g) => g.present && g.identity.index === index);
      return gpu ? { gpu, migDeviceUuid: null } : null;
    }
    const key = id.toLowerCase();
    if (key.startsWith('mig-')) {
      const mig = this.migDevices.get(key);
      const gpu = mig ? this.gpus.get(mig.gpuUuid) : undefined;
      return gpu && mig ? { gpu, migDeviceUuid: mig.migDeviceUuid } : null;
    }
    const gpu = this.all().find((g) => g.identity.uuid.toLowerCase() === key);
    return gpu ? { gpu, migDeviceUuid: null } : null;
  }
}
