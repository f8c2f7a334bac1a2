import type { DriverIdentity, DriverSource, GpuIdentity } from '../model/gpu.js';
import type { Db } from './database.js';

/**
 * Every GPU ever seen, so results and jobs keep a name after the GPU is gone,
 * and the driver version it was last seen with (the fallback key when NVML is down).
 */
export class GpuStore {
  private readonly upsert;
  private readonly selectDriver;
  private readonly selectNvmlKnown;

  constructor(db: Db) {
    this.upsert =
      db.prepare(`INSERT INTO gpus (uuid, name, vendor, pci_bus_id, last_index, first_seen_at, last_seen_at, driver_version, driver_source)
      VALUES (@uuid, @name, @vendor, @pciBusId, @index, @now, @now, @driverVersion, @driverSource)
      ON CONFLICT (uuid) DO UPDATE SET name = excluded.name, vendor = excluded.vendor, pci_bus_id = excluded.pci_bus_id,
        last_index = excluded.last_index, last_seen_at = excluded.last_seen_at,
        driver_version = COALESCE(excluded.driver_version, gpus.driver_version),
        driver_source = COALESCE(excluded.driver_source, gpus.driver_source)`);
    this.selectDriver = db.prepare('SELECT driver_version, driver_source FROM gpus WHERE uuid = ?');
    this.selectNvmlKnown = db.prepare("SELECT * FROM gpus WHERE driver_source = 'nvml' ORDER BY last_index, last_seen_at, uuid");
  }

  /**
   * The GPUs NVML reported when it last answered for this database, with
   * that driver version as 'last-known': what to list while NVML fails at
   * boot instead of a simulated backend's own (phantom) GPUs. Of GPUs seen
   * in one slot (one swapped for another), the one seen last comes last, and
   * the registry keeps the last one named per index present.
   */
  nvmlKnown(): GpuIdentity[] {
    const rows = this.selectNvmlKnown.all() as Array<{
      uuid: string;
      name: string;
      vendor: string;
      pci_bus_id: string | null;
      last_index: number;
      driver_version: string | null;
    }>;
    return rows.map((row) => ({
      uuid: row.uuid,
      index: row.last_index,
      name: row.name,
      vendor: row.vendor as GpuIdentity['vendor'],
      pciBusId: row.pci_bus_id,
      driverVersion: row.driver_version ?? 'unknown',
      driverSource: 'last-known' as DriverSource,
    }));
  }

  seen(gpu: GpuIdentity, now = new Date().toISOString()): void {
    const remembered = gpu.driverSource === 'last-known';
    this.upsert.run({
      uuid: gpu.uuid,
      name: gpu.name,
      vendor: gpu.vendor,
      pciBusId: gpu.pciBusId,
      index: gpu.index,
      now,
      // A remembered version is not new knowledge: the row keeps the version and the source it was learnt from.
      driverVersion: remembered ? null : gpu.driverVersion,
      driverSource: remembered ? null : (gpu.driverSource ?? 'runtime'),
    });
  }

  lastKnownDriver(uuid: string): DriverIdentity | null {
    const row = this.selectDriver.get(uuid) as { driver_version: string | null; driver_source: DriverSource | null } | undefined;
    if (!row?.driver_version) return null;
    return { version: row.driver_version, source: row.driver_source ?? 'runtime' };
  }
}
