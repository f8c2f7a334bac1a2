import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MigrationError, migrate, openDatabase, readMigrations, schemaVersion } from '../../../server/store/database.js';
import { useTempDir } from '../../helpers/temp-dir.js';

describe('database', () => {
  const tempDir = useTempDir();

  it('creates the file and its folder, applies every migration, and uses WAL', () => {
    const file = path.join(tempDir(), 'nested', 'topod.sqlite');
    const db = openDatabase(file);
    expect(schemaVersion(db)).toBe(readMigrations().length);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>;
    expect(tables.map((t) => t.name)).toEqual(
      expect.arrayContaining(['gpus', 'probe_results', 'raw_series', 'probe_jobs', 'schema_migrations']),
    );
    db.close();
  });

  it('applies nothing the second time', () => {
    const file = path.join(tempDir(), 'topod.sqlite');
    openDatabase(file).close();
    const db = openDatabase(file);
    expect(migrate(db)).toEqual([]);
    db.close();
  });

  it('applies new migrations in one transaction: a failing one leaves the schema untouched', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, '0001_a.sql'), 'CREATE TABLE a (x INTEGER);');
    writeFileSync(path.join(dir, '0002_b.sql'), 'CREATE TABLE b (x INTEGER); THIS IS NOT SQL;');
    const db = openDatabase(':memory:', []);
    expect(() => migrate(db, readMigrations(dir))).toThrow();
    expect(schemaVersion(db)).toBe(0);
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name IN ('a', 'b')").get()).toEqual({ n: 0 });
  });

  it('refuses a database newer than this code', () => {
    const db = openDatabase(':memory:');
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, ?, ?)').run('9999_future.sql', 'now');
    expect(() => migrate(db)).toThrow(/newer than this topod knows/);
  });

  it('rejects badly named or gapped migration files', () => {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, '0001_a.sql'), '');
    writeFileSync(path.join(dir, '0003_c.sql'), '');
    expect(() => readMigrations(dir)).toThrow(MigrationError);
    writeFileSync(path.join(dir, 'bad name.sql'), '');
    expect(() => readMigrations(dir)).toThrow(/NNNN_snake_case/);
  });
});
