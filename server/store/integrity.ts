/**
 * Opening the store at boot without ever crash-looping on a bad file.
 *
 * - The folder is created; a failure (a file where the folder should be, no
 *   permission, a read-only mount) is one StartupError naming the path and
 *   the fix.
 * - The file is checked: `PRAGMA integrity_check` when it is small enough to
 *   be quick (it reads every page and cross-checks every index: about 1 ms
 *   per MiB here), `PRAGMA quick_check` (page structure only, no index
 *   cross-check) above INTEGRITY_CHECK_MAX_BYTES.
 * - A damaged file (SQLITE_CORRUPT, SQLITE_NOTADB, a failed check) or a
 *   foreign one (an SQLite file with tables but not topod's) is never
 *   deleted: it is renamed `<file>.damaged-<UTC timestamp>` with its -wal
 *   beside it, a fresh database is created in its place, and what can still
 *   be read from the damaged copy — GPUs, results whose documents parse,
 *   their raw series and the job history — is copied over (salvage.ts: a
 *   damaged header is rebuilt, damaged pages are stepped over). GPUs whose
 *   results were not recovered are probed again.
 */
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CODES, StartupError } from '../errors.js';
import { openDatabase, type Db, type Migration } from './database.js';
import { salvage, type Salvage } from './salvage.js';

export type { Salvage } from './salvage.js';

/** Above this size only quick_check runs at boot (integrity_check reads every index too). */
export const INTEGRITY_CHECK_MAX_BYTES = 256 * 1024 * 1024;

/** SQLite result codes that mean the file itself is bad, not the way it was opened. */
const DAMAGE_CODES = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_CORRUPT_VTAB', 'SQLITE_CORRUPT_SEQUENCE', 'SQLITE_CORRUPT_INDEX']);

export interface BootCheck {
  /** 'integrity_check', 'quick_check', or 'none' (in memory, or a new file). */
  check: 'integrity_check' | 'quick_check' | 'none';
  ok: boolean;
  durationMs: number;
  /** What the check (or the error opening the file) said when it was not ok. */
  problem: string | null;
}

export interface OpenedStore {
  db: Db;
  boot: BootCheck;
  /** Set when the file was damaged or foreign and moved aside: where it is now and what was copied back. */
  movedAside: { file: string; reason: string; salvage: Salvage | null; salvageError: string | null } | null;
}

export interface OpenStoreOptions {
  migrations?: Migration[];
  /** Injected for tests: the clock used to name the moved-aside file. */
  now?: () => Date;
}

export function isDamageError(error: unknown): boolean {
  const code = error !== null && typeof error === 'object' && 'code' in error ? String(error.code) : '';
  return DAMAGE_CODES.has(code) || code.startsWith('SQLITE_CORRUPT');
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Creates the database's folder, or says in one line why it cannot be. */
export function ensureFolder(file: string): void {
  const dir = path.dirname(path.resolve(file));
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    const fix =
      code === 'EEXIST' || code === 'ENOTDIR'
        ? 'a file is in the way of the folder: move it, or point TOPOD_DB (--db) elsewhere'
        : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
          ? 'make the folder writable by this user, or point TOPOD_DB (--db) at a writable place'
          : 'point TOPOD_DB (--db) at a writable place';
    throw new StartupError(ERROR_CODES.STORE_OPEN, `cannot create the database folder ${dir} (${code}): ${fix}`, { cause: error });
  }
}

/** integrity_check or quick_check, as the file's size allows; throws what SQLite throws on a file it cannot read. */
const checkFor = (sizeBytes: number): BootCheck['check'] => (sizeBytes <= INTEGRITY_CHECK_MAX_BYTES ? 'integrity_check' : 'quick_check');

function checkFile(db: Db, sizeBytes: number): BootCheck {
  const check = checkFor(sizeBytes);
  const started = performance.now();
  const rows = db.pragma(`${check}(20)`) as Array<Record<string, string>>;
  const lines = rows.map((row) => Object.values(row)[0] ?? '');
  const ok = lines.length === 1 && lines[0] === 'ok';
  return { check, ok, durationMs: Math.round((performance.now() - started) * 10) / 10, problem: ok ? null : lines.slice(0, 3).join('; ') };
}

/** An SQLite file with tables, none of them topod's: another program's database. */
function foreignReason(db: Db): string | null {
  const tables = (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string }>
  ).map((t) => t.name);
  if (tables.length === 0 || tables.includes('schema_migrations')) return null;
  return `not a topod database (its tables: ${tables.slice(0, 5).join(', ')}${tables.length > 5 ? ', …' : ''})`;
}

/** Opens an existing file just to check it; null when it is sound, else why it is not. */
function inspect(file: string): { boot: BootCheck; damage: string | null } {
  const size = statSync(file).size;
  let db: Db | null = null;
  try {
    db = new Database(file, { fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    const boot = checkFile(db, size);
    if (!boot.ok) return { boot, damage: `${boot.check} failed: ${boot.problem ?? 'unknown'}` };
    const foreign = foreignReason(db);
    return { boot, damage: foreign };
  } catch (error) {
    if (!isDamageError(error)) throw openError(file, error);
    return { boot: { check: checkFor(size), ok: false, durationMs: 0, problem: message(error) }, damage: message(error) };
  } finally {
    db?.close();
  }
}

/** One line for a file SQLite cannot open for a reason other than damage (permissions, a folder in the way…). */
export function openError(file: string, error: unknown): StartupError {
  const code = error !== null && typeof error === 'object' && 'code' in error ? String(error.code) : 'error';
  const fix =
    code.startsWith('SQLITE_READONLY') || code === 'EACCES' || code === 'SQLITE_PERM'
      ? 'make the file and its folder writable by this user, or point TOPOD_DB (--db) elsewhere'
      : code.startsWith('SQLITE_CANTOPEN')
        ? 'check that the path is a file (not a folder) this user can create and write, or point TOPOD_DB (--db) elsewhere'
        : code === 'SQLITE_FULL'
          ? 'free space on that file system, or point TOPOD_DB (--db) elsewhere'
          : 'point TOPOD_DB (--db) at another file, or move this one aside';
  return new StartupError(ERROR_CODES.STORE_OPEN, `cannot open the database ${path.resolve(file)} (${code}: ${message(error)}): ${fix}`, {
    cause: error,
  });
}

const timestamp = (date: Date): string =>
  date
    .toISOString()
    .replaceAll(':', '')
    .replace(/\.\d{3}Z$/, 'Z');

/** Renames the file (and its -wal/-shm, so the copy stays readable) out of the way; never deletes. */
function moveAside(file: string, now: Date): string {
  let target = `${file}.damaged-${timestamp(now)}`;
  for (let n = 2; existsSync(target); n++) target = `${file}.damaged-${timestamp(now)}-${n}`;
  renameSync(file, target);
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(file + suffix)) renameSync(file + suffix, target + suffix);
  }
  return target;
}

/**
 * Opens the daemon's store: checks an existing file, moves a damaged or
 * foreign one aside and salvages what it can, and always returns a working,
 * migrated database or throws a StartupError with one line to print.
 */
export function openStore(file: string, options: OpenStoreOptions = {}): OpenedStore {
  if (file === ':memory:')
    return {
      db: openDatabase(file, options.migrations),
      boot: { check: 'none', ok: true, durationMs: 0, problem: null },
      movedAside: null,
    };
  ensureFolder(file);
  let boot: BootCheck = { check: 'none', ok: true, durationMs: 0, problem: null };
  let movedAside: OpenedStore['movedAside'] = null;
  const exists = existsSync(file);
  if (exists && statSync(file).isDirectory()) {
    throw new StartupError(
      ERROR_CODES.STORE_OPEN,
      `the database path ${path.resolve(file)} is a folder: point TOPOD_DB (--db) at a file in it, e.g. ${path.join(file, 'topod.sqlite')}`,
    );
  }
  if (exists && statSync(file).size > 0) {
    const inspected = inspect(file);
    boot = inspected.boot;
    if (inspected.damage !== null) {
      const moved = moveAside(file, (options.now ?? (() => new Date()))());
      movedAside = { file: moved, reason: inspected.damage, salvage: null, salvageError: null };
    }
  }
  let db: Db;
  try {
    db = openDatabase(file, options.migrations);
  } catch (error) {
    if (error instanceof StartupError || (error instanceof Error && error.name === 'MigrationError')) throw error;
    throw openError(file, error);
  }
  if (movedAside) {
    try {
      movedAside.salvage = salvage(movedAside.file, db);
    } catch (error) {
      movedAside.salvageError = message(error);
    }
  }
  return { db, boot, movedAside };
}
