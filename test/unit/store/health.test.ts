import Database from 'better-sqlite3';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../server/store/database.js';
import { StoreHealth } from '../../../server/store/health.js';
import { useTempDir } from '../../helpers/temp-dir.js';

describe('StoreHealth', () => {
  const tempDir = useTempDir();

  it('is ok while the file takes writes, and fails once it is deleted or replaced', () => {
    const file = path.join(tempDir(), 'topod.sqlite');
    const db = openDatabase(file);
    const health = new StoreHealth(db, file, 0);
    expect(health.check()).toMatchObject({ ok: true });
    expect(db.prepare('SELECT COUNT(*) AS n FROM store_heartbeat').get()).toEqual({ n: 1 });
    renameSync(file, `${file}.moved`);
    writeFileSync(file, '');
    expect(health.check()).toMatchObject({ ok: false, detail: expect.stringContaining('replaced') });
    rmSync(file);
    expect(health.check()).toMatchObject({ ok: false, detail: expect.stringContaining('deleted') });
    db.close();
    expect(health.check()).toMatchObject({ ok: false, detail: 'the database is closed' });
  });

  it('fails when the database cannot be written', () => {
    const file = path.join(tempDir(), 'topod.sqlite');
    openDatabase(file).close();
    const readOnly = new Database(file, { readonly: true });
    const check = new StoreHealth(readOnly, file, 0).check();
    expect(check).toMatchObject({ ok: false, detail: expect.stringMatching(/^not writable: .*readonly/) });
    readOnly.close();
  });

  it('caches its answer briefly so /readyz polling stays cheap', () => {
    const db = openDatabase(':memory:');
    const health = new StoreHealth(db, ':memory:', 1000);
    const first = health.check(10_000);
    db.close();
    expect(health.check(10_500)).toBe(first);
    expect(health.check(11_001)).toMatchObject({ ok: false });
  });
});
