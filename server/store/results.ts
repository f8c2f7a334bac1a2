import type { RawSeries, ResultDocument } from '../model/document.js';
import type { Db } from './database.js';
import { decodeRawSeries, encodeRawSeries, type EncodedRawSeries } from './raw-codec.js';

/** A row that cannot be served: its JSON does not parse, or the document lacks what every reader needs. */
export class UnreadableRowError extends Error {
  constructor(
    readonly resultId: number,
    readonly reason: string,
  ) {
    super(`result ${resultId} cannot be read: ${reason}`);
    this.name = 'UnreadableRowError';
  }
}

/** A result row set aside: logged once, kept in the table for inspection, never served. */
export interface QuarantinedRow {
  resultId: number;
  gpuUuid: string;
  reason: string;
}

export interface ResultKey {
  gpuUuid: string;
  driverVersion: string;
  probeVersion: string;
}

export interface StoredResult extends ResultKey {
  id: number;
  analysisVersion: string;
  configuration: Record<string, unknown>;
  createdAt: string;
  durationMs: number;
  simulated: boolean;
  jobId: string | null;
  /** The result whose raw series a newer analysis rebuilt this one from (no GPU involved). */
  reanalysedFrom: number | null;
  document: ResultDocument;
}

export interface NewResult extends Omit<StoredResult, 'id' | 'reanalysedFrom'> {
  /** Decoded series are encoded here; the analysis worker hands them over encoded already. */
  raw: Array<RawSeries | EncodedRawSeries>;
  /** The document as JSON, when the caller serialised it already (off the event loop). */
  documentJson?: string;
  /** Re-analysis: the result this one was rebuilt from; its raw series are copied as they are stored. */
  reanalysedFrom?: number;
}

/** What insert writes: the document as JSON already (a writer thread is handed no document object to clone). */
export type WritableResult = Omit<NewResult, 'document' | 'documentJson'> & { documentJson: string };

interface ResultRow {
  id: number;
  gpu_uuid: string;
  driver_version: string;
  probe_version: string;
  analysis_version: string;
  configuration: string;
  created_at: string;
  duration_ms: number;
  document: string;
  simulated: number;
  job_id: string | null;
  reanalysed_from: number | null;
  quarantined?: string | null;
}

/**
 * Documents stored before schemaVersion 2 say `schemaVersion: 1`; apart from
 * that number their shape is the same (2 only typed every field and added the
 * optional probe.reanalysedFrom), so they are read, merged and served as they
 * are, not converted: nothing branches on the version. A re-analysis of their
 * raw series (server/results/lifecycle.ts) writes a version 2 document.
 */
function fromRow(row: ResultRow): StoredResult {
  const document = parseObject(row, row.document, 'document');
  // What every reader of a stored document touches (probe.resultId is set below; merge reads elements).
  for (const field of ['probe', 'elements'] as const) {
    const value = document[field];
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new UnreadableRowError(row.id, `the document has no "${field}" object`);
  }
  if (typeof document['schemaVersion'] !== 'number') throw new UnreadableRowError(row.id, 'the document has no schemaVersion');
  const configuration = parseObject(row, row.configuration, 'configuration');
  const result = document as unknown as ResultDocument;
  result.probe.resultId = row.id;
  return {
    id: row.id,
    gpuUuid: row.gpu_uuid,
    driverVersion: row.driver_version,
    probeVersion: row.probe_version,
    analysisVersion: row.analysis_version,
    configuration,
    createdAt: row.created_at,
    durationMs: row.duration_ms,
    simulated: row.simulated === 1,
    jobId: row.job_id,
    reanalysedFrom: row.reanalysed_from,
    document: result,
  };
}

function parseObject(row: ResultRow, text: string, column: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UnreadableRowError(row.id, `its ${column} is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new UnreadableRowError(row.id, `its ${column} is not a JSON object`);
  return value as Record<string, unknown>;
}

export interface ResultStoreOptions {
  /** Told of each row set aside (once: the row is marked and skipped from then on). */
  onQuarantine?: (row: QuarantinedRow) => void;
}

/** Probe results: insert-only history, plus the raw series behind each. */
export class ResultStore {
  private readonly insertResult;
  private readonly insertRaw;
  private readonly byKey;
  private readonly latestAny;
  private readonly byId;
  private readonly rawByResult;
  private readonly historyByGpu;
  private readonly copyRaw;
  private readonly markQuarantined;

  constructor(
    private readonly db: Db,
    private readonly options: ResultStoreOptions = {},
  ) {
    this.insertResult = db.prepare(`INSERT INTO probe_results
      (gpu_uuid, driver_version, probe_version, analysis_version, configuration, created_at, duration_ms, document, simulated, job_id, reanalysed_from)
      VALUES (@gpuUuid, @driverVersion, @probeVersion, @analysisVersion, @configuration, @createdAt, @durationMs, @document, @simulated, @jobId, @reanalysedFrom)`);
    this.insertRaw = db.prepare('INSERT INTO raw_series (result_id, name, op, encoding, data) VALUES (?, ?, ?, ?, ?)');
    // Newest first, without LIMIT: an unreadable row is set aside and the next one read (firstReadable).
    this.byKey = db.prepare(
      'SELECT * FROM probe_results WHERE gpu_uuid = ? AND driver_version = ? AND probe_version = ? AND quarantined IS NULL ORDER BY id DESC',
    );
    this.latestAny = db.prepare('SELECT * FROM probe_results WHERE gpu_uuid = ? AND quarantined IS NULL ORDER BY id DESC');
    this.byId = db.prepare('SELECT * FROM probe_results WHERE id = ? AND quarantined IS NULL');
    this.markQuarantined = db.prepare('UPDATE probe_results SET quarantined = ? WHERE id = ?');
    this.rawByResult = db.prepare('SELECT name, op, encoding, data FROM raw_series WHERE result_id = ? ORDER BY id');
    this.historyByGpu = db.prepare(
      'SELECT id, driver_version, probe_version, analysis_version, created_at, duration_ms, simulated, job_id, reanalysed_from FROM probe_results WHERE gpu_uuid = ? AND quarantined IS NULL ORDER BY id DESC LIMIT ?',
    );
    this.copyRaw = db.prepare(
      'INSERT INTO raw_series (result_id, name, op, encoding, data) SELECT ?, name, op, encoding, data FROM raw_series WHERE result_id = ? ORDER BY id',
    );
  }

  /**
   * Inserts a result and its raw series (a re-analysed result: its source's stored series, copied byte for byte,
   * then `raw`). Callers wrap it in their own transaction with the job update.
   */
  insert(result: NewResult | WritableResult): number {
    const { raw, documentJson, ...row } = result;
    const info = this.insertResult.run({
      ...row,
      document: documentJson ?? JSON.stringify((result as NewResult).document),
      configuration: JSON.stringify(result.configuration),
      simulated: result.simulated ? 1 : 0,
      reanalysedFrom: result.reanalysedFrom ?? null,
    });
    const id = Number(info.lastInsertRowid);
    if (result.reanalysedFrom !== undefined) this.copyRaw.run(id, result.reanalysedFrom);
    for (const series of raw) {
      const encoded = 'encoding' in series ? series : encodeRawSeries(series);
      // A worker's Buffer arrives as a plain Uint8Array, which SQLite's binding does not take.
      const data = Buffer.isBuffer(encoded.data)
        ? encoded.data
        : Buffer.from(encoded.data.buffer, encoded.data.byteOffset, encoded.data.byteLength);
      this.insertRaw.run(id, encoded.name, encoded.op, encoded.encoding, data);
    }
    return id;
  }

  latestFor(key: ResultKey): StoredResult | null {
    return this.firstReadable(this.byKey.iterate(key.gpuUuid, key.driverVersion, key.probeVersion) as IterableIterator<ResultRow>);
  }

  latestForGpu(gpuUuid: string): StoredResult | null {
    return this.firstReadable(this.latestAny.iterate(gpuUuid) as IterableIterator<ResultRow>);
  }

  get(id: number): StoredResult | null {
    return this.firstReadable(this.byId.iterate(id) as IterableIterator<ResultRow>);
  }

  /**
   * The first row that reads, newest first. An unreadable one (a truncated
   * document, one missing its fields) must not stop the daemon: it is marked
   * quarantined — kept, never served — and the next row is tried; with none
   * left the GPU has no result and is probed again.
   */
  private firstReadable(rows: IterableIterator<ResultRow>): StoredResult | null {
    const bad: QuarantinedRow[] = [];
    let found: StoredResult | null = null;
    for (const row of rows) {
      try {
        found = fromRow(row);
        break;
      } catch (error) {
        if (!(error instanceof UnreadableRowError)) throw error;
        bad.push({ resultId: row.id, gpuUuid: row.gpu_uuid, reason: error.reason });
      }
    }
    // After the loop: the iterator holds the connection while it is open.
    if (typeof rows.return === 'function') rows.return();
    for (const row of bad) {
      this.markQuarantined.run(row.reason, row.resultId);
      this.options.onQuarantine?.(row);
    }
    return found;
  }

  rawSeries(resultId: number): RawSeries[] {
    return this.encodedRawSeries(resultId).map(decodeRawSeries);
  }

  /** The stored series as they are, for the analysis worker to decode (gunzip and parse stay off the event loop). */
  encodedRawSeries(resultId: number): EncodedRawSeries[] {
    return this.rawByResult.all(resultId) as EncodedRawSeries[];
  }

  history(gpuUuid: string, limit = 50): Array<Omit<StoredResult, 'document' | 'configuration' | 'gpuUuid'>> {
    const rows = this.historyByGpu.all(gpuUuid, limit) as ResultRow[];
    return rows.map((row) => ({
      id: row.id,
      driverVersion: row.driver_version,
      probeVersion: row.probe_version,
      analysisVersion: row.analysis_version,
      createdAt: row.created_at,
      durationMs: row.duration_ms,
      simulated: row.simulated === 1,
      jobId: row.job_id,
      reanalysedFrom: row.reanalysed_from,
    }));
  }
}
