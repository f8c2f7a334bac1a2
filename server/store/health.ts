import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import type { Db } from './database.js';

export interface CheckResult {
  ok: boolean;
  detail: string;
}

/**
 * Whether the store still takes writes that will survive a restart: the file
 * is still the one opened (a deleted or replaced file keeps working through
 * the open handle while every write is lost), its folder is writable, and a
 * one-row write commits. Cached briefly so /readyz stays cheap under polling.
 */
export class StoreHealth {
  private last: { at: number; result: CheckResult } | null = null;
  private readonly inode: number | null;
  private readonly heartbeat;

  constructor(
    private readonly db: Db,
    private readonly file: string,
    private readonly cacheMs = 1000,
  ) {
    this.inode = this.isFile ? statSync(file).ino : null;
    this.heartbeat = db.prepare('INSERT INTO store_heartbeat (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at');
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
      }
      this.heartbeat.run(new Date().toISOString());
      return { ok: true, detail: this.isFile ? `${this.file}: writable` : 'in memory: writable, not kept across restarts' };
    } catch (error) {
      return { ok: false, detail: `not writable: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
}
