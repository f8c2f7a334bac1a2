import { gunzipSync, gzipSync } from 'node:zlib';
import type { RawSeries, ResultDocument } from '../model/document.js';
import type { Db } from './database.js';

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
  raw: RawSeries[];
  /** Re-analysis: the result this one was rebuilt from; its raw series are copied as they are stored. */
  reanalysedFrom?: number;
}

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
}

const RAW_ENCODING = 'json+gzip';

/**
 * Documents stored before schemaVersion 2 say `schemaVersion: 1`; apart from
 * that number their shape is the same (2 only typed every field and added the
 * optional probe.reanalysedFrom), so they are read, merged and served as they
 * are, not converted: nothing branches on the version. A re-analysis of their
 * raw series (server/jobs/reanalyser.ts) writes a version 2 document.
 */
function fromRow(row: ResultRow): StoredResult {
  const document = JSON.parse(row.document) as ResultDocument;
  document.probe.resultId = row.id;
  return {
    id: row.id,
    gpuUuid: row.gpu_uuid,
    driverVersion: row.driver_version,
    probeVersion: row.probe_version,
    analysisVersion: row.analysis_version,
    configuration: JSON.parse(row.configuration) as Record<string, unknown>,
    createdAt: row.created_at,
    durationMs: row.duration_ms,
    simulated: row.simulated === 1,
    jobId: row.job_id,
    reanalysedFrom: row.reanalysed_from,
    document,
  };
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

  constructor(private readonly db: Db) {
    this.insertResult = db.prepare(`INSERT INTO probe_results
      (gpu_uuid, driver_version, probe_version, analysis_version, configuration, created_at, duration_ms, document, simulated, job_id, reanalysed_from)
      VALUES (@gpuUuid, @driverVersion, @probeVersion, @analysisVersion, @configuration, @createdAt, @durationMs, @document, @simulated, @jobId, @reanalysedFrom)`);
    this.insertRaw = db.prepare('INSERT INTO raw_series (result_id, name, op, encoding, data) VALUES (?, ?, ?, ?, ?)');
    this.byKey = db.prepare(`SELECT * FROM probe_results WHERE gpu_uuid = ? AND driver_version = ? AND probe_version = ? ORDER BY id DESC LIMIT 1`);
    this.latestAny = db.prepare('SELECT * FROM probe_results WHERE gpu_uuid = ? ORDER BY id DESC LIMIT 1');
    this.byId = db.prepare('SELECT * FROM probe_results WHERE id = ?');
    this.rawByResult = db.prepare('SELECT name, op, encoding, data FROM raw_series WHERE result_id = ? ORDER BY id');
    this.historyByGpu = db.prepare(
      'SELECT id, driver_version, probe_version, analysis_version, created_at, duration_ms, simulated, job_id, reanalysed_from FROM probe_results WHERE gpu_uuid = ? ORDER BY id DESC LIMIT ?',
    );
    this.copyRaw = db.prepare('INSERT INTO raw_series (result_id, name, op, encoding, data) SELECT ?, name, op, encoding, data FROM raw_series WHERE result_id = ? ORDER BY id');
  }

  /**
   * Inserts a result and its raw series (a re-analysed result: its source's stored series, copied byte for byte,
   * then `raw`). Callers wrap it in their own transaction with the job update.
   */
  insert(result: NewResult): number {
    const info = this.insertResult.run({
      ...result,
      configuration: JSON.stringify(result.configuration),
      document: JSON.stringify(result.document),
      simulated: result.simulated ? 1 : 0,
      reanalysedFrom: result.reanalysedFrom ?? null,
    });
    const id = Number(info.lastInsertRowid);
    if (result.reanalysedFrom !== undefined) this.copyRaw.run(id, result.reanalysedFrom);
    for (const series of result.raw) {
      const data = gzipSync(JSON.stringify({ args: series.args, result: series.result }));
      this.insertRaw.run(id, series.name, series.op, RAW_ENCODING, data);
    }
    return id;
  }

  latestFor(key: ResultKey): StoredResult | null {
    const row = this.byKey.get(key.gpuUuid, key.driverVersion, key.probeVersion) as ResultRow | undefined;
    return row ? fromRow(row) : null;
  }

  latestForGpu(gpuUuid: string): StoredResult | null {
    const row = this.latestAny.get(gpuUuid) as ResultRow | undefined;
    return row ? fromRow(row) : null;
  }

  get(id: number): StoredResult | null {
    const row = this.byId.get(id) as ResultRow | undefined;
    return row ? fromRow(row) : null;
  }

  rawSeries(resultId: number): RawSeries[] {
    const rows = this.rawByResult.all(resultId) as Array<{ name: string; op: string; encoding: string; data: Buffer }>;
    return rows.map((row) => {
      if (row.encoding !== RAW_ENCODING) throw new Error(`raw series "${row.name}" has unknown encoding ${row.encoding}`);
      const { args, result } = JSON.parse(gunzipSync(row.data).toString('utf8')) as { args: unknown; result: unknown };
      return { name: row.name, op: row.op, args, result };
    });
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
