/**
 * What can still be read from a damaged database, copied into a fresh one.
 *
 * Two things SQLite's own recovery (the sqlite3 shell's `.recover`) does,
 * done here because neither better-sqlite3's SQLite nor Debian 12's sqlite3
 * shell is built with the `sqlite_dbpage` table that `.recover` reads pages
 * through (Debian's `.recover` fails with "no such table: sqlite_dbpage"):
 *
 * - A damaged database header (its first 100 bytes: "file is not a
 *   database") is rebuilt on a copy, as the recovery extension's page-1 shim
 *   does: the page size is the candidate under which the most tables can be
 *   read, the freelist is dropped, and the size comes from the file's. Every
 *   data page behind the header is then read as it was.
 * - Rows are read one by one by rowid, and a damaged or missing page (garbage
 *   mid-file, a file truncated to half) is stepped over: the next readable
 *   rowid is searched for (galloping, then bisecting), so one bad page costs
 *   the rows on it, not every row after it. A row whose own pages (its
 *   document's overflow pages) cannot be read is skipped alone.
 *
 * GPUs, results whose documents parse, their raw series and the job history
 * are copied, ids kept (re-analysis links and jobs' results survive), and
 * what was recovered is reported per table.
 */
import Database from 'better-sqlite3';
import { closeSync, copyFileSync, existsSync, fstatSync, openSync, rmSync, writeSync } from 'node:fs';
import type { Db } from './database.js';

export interface TableSalvage {
  /** Rows copied into the fresh database. */
  recovered: number;
  /** Rows read but not copied (unreadable document, its GPU or result lost), rows that could not be read, and damaged stretches of the table. */
  skipped: number;
}

export interface Salvage {
  gpus: number;
  results: number;
  rawSeries: number;
  jobs: number;
  /** Everything skipped, all tables together. */
  skipped: number;
  /** Per table (gpus, probe_results, raw_series, probe_jobs): what was recovered and what was not. */
  tables: Record<string, TableSalvage>;
  /** How the damaged file was read: as it is, or with its header rebuilt (and which page size). */
  method: string;
}

/** Page sizes SQLite allows, the default first. */
const PAGE_SIZES = [4096, 8192, 16384, 32768, 65536, 1024, 2048, 512];
const HEADER_BYTES = 100;
/** Rowids are searched up to here after a damaged page (SQLite's largest rowid is 2^63 - 1; topod's are small). */
const MAX_ROWID = 2 ** 53;

/** The 100-byte database header for `pageSize`: the freelist dropped, the size taken from the file (in-header size invalid). */
export function rebuiltHeader(pageSize: number, wal: boolean): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.write('SQLite format 3\0', 0, 'latin1');
  header.writeUInt16BE(pageSize === 65536 ? 1 : pageSize, 16);
  header[18] = wal ? 2 : 1; // file format write / read version: 2 keeps a -wal beside the file in use
  header[19] = wal ? 2 : 1;
  header[20] = 0; // reserved bytes per page
  header[21] = 64; // payload fractions, fixed by the format
  header[22] = 32;
  header[23] = 32;
  header.writeUInt32BE(1, 24); // change counter
  header.writeUInt32BE(0, 28); // size in pages: 0, so SQLite takes the file's size
  header.writeUInt32BE(1, 40); // schema cookie
  header.writeUInt32BE(4, 44); // schema format
  header.writeUInt32BE(1, 56); // text encoding: UTF-8
  header.writeUInt32BE(2, 92); // version-valid-for ≠ change counter: the in-header size is not trusted
  header.writeUInt32BE(3_053_000, 96);
  return header;
}

/** How many tables of the schema answer a first-row read: the score of a page size guess. */
function readableTables(file: string): number {
  let db: Db | null = null;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all() as string[];
    let readable = 0;
    for (const table of tables) {
      try {
        db.prepare(`SELECT rowid FROM "${table.replaceAll('"', '""')}" LIMIT 1`).get();
        readable++;
      } catch {
        // this table's root page does not read under this guess
      }
    }
    return readable;
  } catch {
    return -1;
  } finally {
    db?.close();
  }
}

/** A readable source: the file itself when SQLite opens it, else a copy with its header rebuilt. */
function readableSource(damagedFile: string): { file: string; method: string; cleanup: () => void } {
  if (readableTables(damagedFile) >= 0) return { file: damagedFile, method: 'read as it is', cleanup: () => undefined };
  const copy = `${damagedFile}.header-rebuilt`;
  const wal = existsSync(`${damagedFile}-wal`);
  const cleanup = () => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(copy + suffix, { force: true });
  };
  copyFileSync(damagedFile, copy);
  if (wal) copyFileSync(`${damagedFile}-wal`, `${copy}-wal`);
  let best: { pageSize: number; score: number } | null = null;
  for (const pageSize of PAGE_SIZES) {
    writeHeader(copy, rebuiltHeader(pageSize, wal));
    const score = readableTables(copy);
    if (score > (best?.score ?? 0)) best = { pageSize, score };
  }
  if (!best) {
    cleanup();
    throw new Error('the database header is damaged and no page size reads its schema');
  }
  writeHeader(copy, rebuiltHeader(best.pageSize, wal));
  return { file: copy, method: `header rebuilt (page size ${best.pageSize})`, cleanup };
}

function writeHeader(file: string, header: Buffer): void {
  const fd = openSync(file, 'r+');
  try {
    if (fstatSync(fd).size >= HEADER_BYTES) writeSync(fd, header, 0, HEADER_BYTES, 0);
  } finally {
    closeSync(fd);
  }
}

/**
 * Every row of a table that can be read, in rowid order, stepping over
 * damaged pages; `damaged` counts the rows that failed to read and the
 * stretches stepped over (each at least one row).
 */
export function readableRows(source: Db, table: string): { rows: Array<Record<string, unknown>>; damaged: number } {
  const quoted = `"${table.replaceAll('"', '""')}"`;
  const firstFrom = source.prepare(`SELECT rowid FROM ${quoted} WHERE rowid >= ? ORDER BY rowid LIMIT 1`).pluck();
  const rowAt = source.prepare(`SELECT * FROM ${quoted} WHERE rowid = ?`);
  const seek = (from: number): { ok: true; rowid: number | undefined } | { ok: false } => {
    try {
      return { ok: true, rowid: firstFrom.get(from) as number | undefined };
    } catch {
      return { ok: false };
    }
  };
  const rows: Array<Record<string, unknown>> = [];
  let damaged = 0;
  // topod's rowids are SQLite's own, from 1 up (never negative).
  let from = 0;
  while (from <= MAX_ROWID) {
    let found = seek(from);
    if (!found.ok) {
      damaged++;
      const resumeAt = nextReadable(seek, from);
      if (resumeAt === null) break;
      from = resumeAt;
      found = seek(from);
      if (!found.ok) break;
    }
    if (found.rowid === undefined) break;
    try {
      rows.push(rowAt.get(found.rowid) as Record<string, unknown>);
    } catch {
      damaged++;
    }
    from = found.rowid + 1;
  }
  return { rows, damaged };
}

/** The smallest rowid above `failedAt` from which a seek reads again (galloping, then bisecting), or null. */
function nextReadable(seek: (from: number) => { ok: boolean }, failedAt: number): number | null {
  let bad = failedAt;
  let good: number | null = null;
  for (let step = 1; failedAt + step <= MAX_ROWID; step *= 2) {
    if (seek(failedAt + step).ok) {
      good = failedAt + step;
      break;
    }
    bad = failedAt + step;
  }
  if (good === null) return null;
  while (good - bad > 1) {
    const middle = Math.floor((bad + good) / 2);
    if (seek(middle).ok) good = middle;
    else bad = middle;
  }
  return good;
}

function jsonObject(text: unknown): Record<string, unknown> | null {
  if (typeof text !== 'string') return null;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const isObject = (value: unknown): boolean => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Copies GPUs, readable results with their raw series, and jobs from the
 * damaged copy into the fresh database, ids kept. Heartbeat and schema rows
 * come from the fresh migration. A job whose result was lost keeps its
 * history without the link; one still queued or running is marked
 * interrupted at boot like any other.
 */
export function salvage(damagedFile: string, target: Db): Salvage {
  const readable = readableSource(damagedFile);
  const tables: Record<string, TableSalvage> = {};
  const tally = (table: string, recovered: number, skipped: number) => (tables[table] = { recovered, skipped });
  const source = new Database(readable.file, { readonly: true, fileMustExist: true });
  try {
    const has = (table: string) => source.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(table) !== undefined;
    if (has('gpus') && has('probe_results') && has('schema_migrations')) {
      const columns = (table: string) => new Set((target.pragma(`table_info(${table})`) as Array<{ name: string }>).map((c) => c.name));
      const insertRow = (table: string, known: Set<string>, row: Record<string, unknown>): boolean => {
        const names = Object.keys(row).filter((name) => known.has(name));
        return (
          target
            .prepare(`INSERT OR IGNORE INTO ${table} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`)
            .run(...names.map((n) => row[n])).changes === 1
        );
      };
      /** Copies the rows `keep` accepts (it may rewrite them), in rowid order; returns the copied rows' `key` values. */
      const copyTable = (
        table: string,
        key: string,
        keep: (row: Record<string, unknown>) => Record<string, unknown> | null,
      ): Set<unknown> => {
        const copied = new Set<unknown>();
        if (!has(table)) return copied;
        const { rows, damaged } = readableRows(source, table);
        const known = columns(table);
        for (const row of rows) {
          const kept = keep(row);
          try {
            if (kept && insertRow(table, known, kept)) copied.add(kept[key]);
          } catch {
            // a row the fresh schema refuses (a constraint the damaged copy broke)
          }
        }
        tally(table, copied.size, rows.length - copied.size + damaged);
        return copied;
      };
      target.transaction(() => {
        const gpus = copyTable('gpus', 'uuid', (row) => row);
        // In id order, so a result re-analysed from another finds it already copied (or loses the link).
        const results = copyTable('probe_results', 'id', (row) => {
          const document = jsonObject(row['document']);
          const readableResult =
            document && isObject(document['probe']) && isObject(document['elements']) && jsonObject(row['configuration']);
          if (!readableResult || !gpus.has(row['gpu_uuid']) || row['quarantined']) return null;
          const sourceCopied = target.prepare('SELECT 1 FROM probe_results WHERE id = ?').get(row['reanalysed_from']) !== undefined;
          return { ...row, reanalysed_from: sourceCopied ? row['reanalysed_from'] : null };
        });
        copyTable('raw_series', 'id', (row) => (results.has(row['result_id']) ? row : null));
        copyTable('probe_jobs', 'id', (row) => ({ ...row, result_id: results.has(row['result_id']) ? row['result_id'] : null }));
      })();
    }
  } finally {
    source.close();
    readable.cleanup();
  }
  const count = (table: string) => tables[table]?.recovered ?? 0;
  return {
    gpus: count('gpus'),
    results: count('probe_results'),
    rawSeries: count('raw_series'),
    jobs: count('probe_jobs'),
    skipped: Object.values(tables).reduce((sum, t) => sum + t.skipped, 0),
    tables,
    method: readable.method,
  };
}
