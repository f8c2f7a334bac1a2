/**
 * Retention: results are history, but not forever. Per GPU the newest
 * `keepResults` results are kept with their raw series, and besides them the
 * newest result of every (driver version, probe version) key — so a driver
 * rolled back still finds its measurement — and every result a kept one was
 * re-analysed from. Finished jobs older than `jobMaxAgeMs` are deleted, and
 * the newest MAX_FINISHED_JOBS at most are kept whatever their age. Rows set
 * aside as unreadable (quarantined) are kept for inspection. Queued and
 * running jobs are never touched. The pages pruned rows leave free are given
 * back to the file system (incremental vacuum, database.ts), so the file
 * follows what is kept instead of its high-water mark.
 */
import type { Db } from './database.js';

/** A cap on finished jobs whatever their age: 300 forced probes in 10 s must not grow the table for a month. */
export const MAX_FINISHED_JOBS = 5000;

export interface RetentionPolicy {
  keepResults: number;
  jobMaxAgeMs: number;
}

export interface Pruned {
  results: number;
  rawSeries: number;
  jobs: number;
  /** Free pages handed back to the file system afterwards. */
  freedPages: number;
}

export class Retention {
  private readonly gpusWithResults;
  private readonly doomedResults;
  private readonly deleteRaw;
  private readonly unlinkJobs;
  private readonly deleteResult;
  private readonly deleteOldJobs;
  private readonly deleteExcessJobs;

  constructor(
    private readonly db: Db,
    private readonly policy: RetentionPolicy,
  ) {
    this.gpusWithResults = db.prepare('SELECT DISTINCT gpu_uuid FROM probe_results');
    this.doomedResults = db.prepare(`
      WITH ranked AS (
        SELECT id, reanalysed_from,
          ROW_NUMBER() OVER (ORDER BY id DESC) AS overall,
          ROW_NUMBER() OVER (PARTITION BY driver_version, probe_version ORDER BY id DESC) AS in_key
        FROM probe_results WHERE gpu_uuid = @gpu AND quarantined IS NULL
      ),
      kept AS (SELECT id, reanalysed_from FROM ranked WHERE overall <= @keep OR in_key = 1)
      SELECT id FROM ranked
      WHERE id NOT IN (SELECT id FROM kept)
        AND id NOT IN (SELECT reanalysed_from FROM kept WHERE reanalysed_from IS NOT NULL)`);
    this.deleteRaw = db.prepare('DELETE FROM raw_series WHERE result_id = ?');
    this.unlinkJobs = db.prepare('UPDATE probe_jobs SET result_id = NULL WHERE result_id = ?');
    // A pruned result that another pruned one was re-analysed from: unlink first (the FK is checked per statement).
    this.deleteResult = db.prepare('DELETE FROM probe_results WHERE id = ?');
    this.deleteOldJobs = db.prepare(
      "DELETE FROM probe_jobs WHERE state NOT IN ('queued', 'waiting', 'running') AND finished_at IS NOT NULL AND finished_at < ?",
    );
    this.deleteExcessJobs = db.prepare(`DELETE FROM probe_jobs WHERE state NOT IN ('queued', 'waiting', 'running') AND rowid IN (
      SELECT rowid FROM probe_jobs WHERE state NOT IN ('queued', 'waiting', 'running') ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?)`);
  }

  /** Prunes one GPU's results beyond the policy (after each stored result). */
  pruneGpu(gpuUuid: string): Pruned {
    const counts = this.pruneResults(gpuUuid);
    counts.freedPages = this.reclaim();
    return counts;
  }

  private pruneResults(gpuUuid: string): Pruned {
    const counts: Pruned = { results: 0, rawSeries: 0, jobs: 0, freedPages: 0 };
    const ids = (this.doomedResults.all({ gpu: gpuUuid, keep: this.policy.keepResults }) as Array<{ id: number }>).map((r) => r.id);
    if (ids.length === 0) return counts;
    const unlinkReanalysed = this.db.prepare('UPDATE probe_results SET reanalysed_from = NULL WHERE reanalysed_from = ?');
    this.db.transaction(() => {
      for (const id of ids) {
        counts.rawSeries += this.deleteRaw.run(id).changes;
        this.unlinkJobs.run(id);
        unlinkReanalysed.run(id);
      }
      for (const id of ids) counts.results += this.deleteResult.run(id).changes;
    })();
    return counts;
  }

  /** Every GPU's results, then old jobs (at boot and periodically). */
  pruneAll(now = Date.now()): Pruned {
    const total: Pruned = { results: 0, rawSeries: 0, jobs: 0, freedPages: 0 };
    for (const { gpu_uuid: gpu } of this.gpusWithResults.all() as Array<{ gpu_uuid: string }>) {
      const pruned = this.pruneResults(gpu);
      total.results += pruned.results;
      total.rawSeries += pruned.rawSeries;
    }
    const cutoff = new Date(now - this.policy.jobMaxAgeMs).toISOString();
    this.db.transaction(() => {
      total.jobs += this.deleteOldJobs.run(cutoff).changes;
      total.jobs += this.deleteExcessJobs.run(MAX_FINISHED_JOBS).changes;
    })();
    total.freedPages = this.reclaim();
    return total;
  }

  /**
   * Hands every free page back (PRAGMA incremental_vacuum) and checkpoints,
   * so the main file and the WAL shrink now rather than at some later
   * checkpoint. Returns the pages freed; 0 when none were free, or inside a
   * caller's transaction (where neither may run).
   */
  reclaim(): number {
    if (this.db.inTransaction) return 0;
    const free = this.db.pragma('freelist_count', { simple: true }) as number;
    if (free === 0) return 0;
    this.db.pragma('incremental_vacuum');
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    return free - (this.db.pragma('freelist_count', { simple: true }) as number);
  }
}
