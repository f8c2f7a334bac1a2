import type { GpuIdentity } from '../model/gpu.js';
import type { Db } from './database.js';

/** Every GPU ever seen, so results and jobs keep a name after the GPU is gone. */
export class GpuStore {
  private readonly upsert;

  constructor(db: Db) {
    this.upsert = db.prepare(`INSERT INTO gpus (uuid, name, vendor, pci_bus_id, last_index, first_seen_at, last_seen_at)
      VALUES (@uuid, @name, @vendor, @pciBusId, @index, @now, @now)
      ON CONFLICT (uuid) DO UPDATE SET name = excluded.name, vendor = excluded.vendor, pci_bus_id = excluded.pci_bus_id,
        last_index = excluded.last_index, last_seen_at = excluded.last_seen_at`);
  }

  seen(gpu: GpuIdentity, now = new Date().toISOString()): void {
    this.upsert.run({ uuid: gpu.uuid, name: gpu.name, vendor: gpu.vendor, pciBusId: gpu.pciBusId, index: gpu.index, now });
  }
}
