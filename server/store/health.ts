import { accessSync, constants, statSync, statfsSync } from 'node:fs';
import path from 'node:path';
import type { Db } from './database.js';

export interface CheckResult {
  ok: boolean;
  detail: string;
}

/** Below this much free space on the database's file system the store is reported degraded. */
export const MIN_FREE_BYTES = 16 * 1024 * 1024;

export interface StoreHealthContext {
  /** What the boot check found, e.g. "integrity_check ok in 3 ms" or "… moved aside to X; fresh database". */
  boot?: string;
  /** Free bytes of the file system holding `file` (tests inject; default statfs). */
  freeBytes?: (file: string) => number | null;
}

/**
 * Whether the store still takes writes that will survive a restart: the file
 * is still the one opened (a deleted or replaced file keeps working through
 * the open handle while every write is lost), its folder is writable, its
 * file system has room, no real write has failed since the last one that
 * succeeded (SQLITE_FULL, SQLITE_READONLY, SQLITE_IOERR…), and a one-row write
 * commits. Cached briefly so /readyz stays cheap under polling.
 */
export class StoreHealth {
  private last: { at: number; result: CheckResult } | null = null;
  private readonly inode: number | null;
  private readonly heartbeat;
  private writeFailure: { at: string; message: string } | null = null;

  constructor(
    private readonly db: Db,
    private readonly file: string,
    private readonly cacheMs = 1000,
    private readonly context: StoreHealthContext = {},
  ) {
    this.inode = this.isFile ? statSync(file).ino : null;
    this.heartbeat = db.prepare('INSERT INTO store_heartbeat (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at');
  }

  /**
   * A write the daemon needed failed: the store is degraded until a later one
   * succeeds (recordWriteSuccess) or the daemon restarts. A one-row heartbeat
   * succeeding proves nothing here — a full disk still rewrites one row.
   */
  recordWriteFailure(error: unknown): void {
    const code = error !== null && typeof error === 'object' && 'code' in error ? String(error.code) : 'error';
    this.writeFailure = { at: new Date().toISOString(), message: `${code}: ${error instanceof Error ? error.message : String(error)}` };
    this.last = null;
  }

  recordWriteSuccess(): void {
    if (this.writeFailure === null) return;
    this.writeFailure = null;
    this.last = null;
  }

  check(now = Date.now()): CheckResult {
    if (this.last && now - this.last.at < this.cacheMs) return this.last.result;
    const result = this.probe();
    this.last = { at: now, result };
    return result;
  }

  private get isFile(): boolean {
    return this.file !== ':memory:' && this.file !== '';
  }

  private probe(): CheckResult {
    if (!this.db.open) return { ok: false, detail: 'the database is closed' };
    try {
      if (this.isFile) {
        const stat = statSync(this.file, { throwIfNoEntry: false });
        if (!stat) return { ok: false, detail: `${this.file} was deleted while open: results written now would be lost at restart` };
        if (stat.ino !== this.inode) return { ok: false, detail: `${this.file} was replaced by another file while open` };
        accessSync(path.dirname(path.resolve(this.file)), constants.W_OK);
        accessSync(this.file, constants.W_OK);
        const free = (this.context.freeBytes ?? freeBytes)(this.file);
        if (free !== null && free < MIN_FREE_BYTES) {
          return {
            ok: false,
            detail: `degraded: the file system of ${this.file} has ${free} bytes free; new results may not be stored (measured ones stay served from memory)`,
          };
        }
      }
      if (this.writeFailure) {
        return {
          ok: false,
          detail: `degraded: a write failed at ${this.writeFailure.at} (${this.writeFailure.message}); what is measured stays served from memory, new results are not kept until a write succeeds`,
        };
      }
      this.heartbeat.run(new Date().toISOString());
      const boot = this.context.boot ? `; at boot: ${this.context.boot}` : '';
      return { ok: true, detail: (this.isFile ? `${this.file}: writable` : 'in memory: writable, not kept across restarts') + boot };
    } catch (error) {
      return { ok: false, detail: `not writable: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
}

function freeBytes(file: string): number | null {
  try {
    const stats = statfsSync(path.dirname(path.resolve(file)));
    return stats.bavail * stats.bsize;
  } catch {
    return null;
  }
}
