import Database from 'better-sqlite3';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CODES } from '../errors.js';
import { projectRoot } from '../paths.js';

export type Db = Database.Database;

const MIGRATION_FILE = /^(\d{4})_[a-z0-9_]+\.sql$/;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export class MigrationError extends Error {
  readonly code = ERROR_CODES.MIGRATION;
}

export function readMigrations(dir = path.join(projectRoot(), 'migrations')): Migration[] {
  const migrations = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .map((file) => {
      const match = MIGRATION_FILE.exec(file);
      if (!match) throw new MigrationError(`migration file "${file}" must be named NNNN_snake_case.sql`);
      return { version: Number(match[1]), name: file, sql: readFileSync(path.join(dir, file), 'utf8') };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new MigrationError(`migrations must be numbered 0001, 0002, … without gaps; found ${m.name} at position ${i + 1}`);
  });
  return migrations;
}

/** Applies every migration newer than the database, all in one transaction. Returns the versions applied. */
export function migrate(db: Db, migrations: Migration[] = readMigrations()): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const current = (db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number }).v;
  const latest = migrations.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new MigrationError(
      `database schema version ${current} is newer than this topod knows (${latest}); upgrade topod or use another TOPOD_DB`,
    );
  }
  const pending = migrations.filter((m) => m.version > current);
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  db.transaction(() => {
    for (const m of pending) {
      db.exec(m.sql);
      record.run(m.version, m.name, new Date().toISOString());
    }
  })();
  return pending.map((m) => m.version);
}

export function schemaVersion(db: Db): number {
  return (db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number }).v;
}

/** PRAGMA auto_vacuum's value for INCREMENTAL: free pages can be handed back to the file system on request. */
const AUTO_VACUUM_INCREMENTAL = 2;

/**
 * Puts the file in incremental auto-vacuum mode, so retention can give the
 * pages of pruned results back (Retention.reclaim). Set before the first
 * table of a new file; an older file (auto_vacuum = NONE: it never shrank,
 * 127 MB holding 11 results in issue 22) is converted once by a VACUUM.
 */
export function ensureIncrementalVacuum(db: Db): void {
  if (db.pragma('auto_vacuum', { simple: true }) === AUTO_VACUUM_INCREMENTAL) return;
  db.pragma('auto_vacuum = INCREMENTAL');
  if (db.prepare('SELECT 1 FROM sqlite_schema LIMIT 1').get() !== undefined) db.exec('VACUUM');
}

/** Opens (creating its folder) and migrates the database. WAL so readers never wait on the writer. */
export function openDatabase(file: string, migrations?: Migration[]): Db {
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = new Database(file);
  try {
    ensureIncrementalVacuum(db);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    migrate(db, migrations);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
