/**
 * A file database's results are written by a thread of their own (issue 17.5: a probe's megabyte of series is
 * never inserted on the event loop), in one transaction with the job's success, and read back by the serving
 * connection.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isStoreWriteError } from '../../../server/jobs/scheduler.js';
import { openDatabase } from '../../../server/store/database.js';
import { GpuStore } from '../../../server/store/gpus.js';
import { JobStore } from '../../../server/store/jobs.js';
import { encodeRawSeries, type EncodedRawSeries } from '../../../server/store/raw-codec.js';
import { inProcessResultWriter, ThreadResultWriter, type ResultWriter } from '../../../server/store/result-writer.js';
import { ResultStore, type WritableResult } from '../../../server/store/results.js';
import { gpuIdentity, resultRow } from '../../helpers/fakes.js';
import { useTempDir } from '../../helpers/temp-dir.js';

const tempDir = useTempDir('topod-writer-');
const writers: ResultWriter[] = [];
afterEach(async () => {
  for (const writer of writers.splice(0)) await writer.close();
});

const SERIES = [
  { name: 'l1.sweep', op: 'pchase', args: { n: 1 }, result: { latenciesCycles: [30, 31, 32] } },
  { name: 'l2.sweep', op: 'pchase', args: { n: 2 }, result: { latenciesCycles: Array.from({ length: 5000 }, (_, i) => 200 + (i % 7)) } },
];

function row(raw: EncodedRawSeries[], jobId: string | null): WritableResult {
  const { document: _document, ...rest } = resultRow(1234, { createdAt: '2026-11-28T08:00:00.000Z', jobId, raw });
  return { ...rest, raw, documentJson: JSON.stringify({ schemaVersion: 2, elements: { l1: { size: { value: 1234 } } }, probe: {} }) };
}

function setup() {
  const file = path.join(tempDir(), 'topod.sqlite');
  const db = openDatabase(file);
  new GpuStore(db).seen(gpuIdentity());
  const jobs = new JobStore(db);
  const job = jobs.create({ gpuUuid: gpuIdentity().uuid, reason: 'test', requestedBy: 'test', only: null, force: false });
  jobs.start(job.id, '2026-11-28T07:59:59.000Z');
  return { file, db, jobs, results: new ResultStore(db), job };
}

describe('ThreadResultWriter', () => {
  it("writes a result, its series and its job's success from its own thread; the serving connection reads them", async () => {
    const { file, db, jobs, results, job } = setup();
    const writer = new ThreadResultWriter(file);
    writers.push(writer);
    const raw = SERIES.map(encodeRawSeries);
    const written = await writer.write(row(raw, job.id), { jobId: job.id, finishedAt: '2026-11-28T08:00:00.000Z' });
    expect(written.job).toMatchObject({ id: job.id, state: 'succeeded', resultId: written.resultId, progress: 1 });
    expect(jobs.get(job.id)).toEqual(written.job);
    expect(results.get(written.resultId)?.document.elements.l1?.size?.value).toBe(1234);
    expect(results.rawSeries(written.resultId)).toEqual(SERIES);
    // The series' bytes moved to the writer: nothing was copied on this side.
    expect(raw.every((series) => series.data.byteLength === 0)).toBe(true);
    db.close();
  });

  it("copies, never moves, a Node Buffer's bytes (it may be a slice of the pool other Buffers share)", async () => {
    const { file, db, results, job } = setup();
    const writer = new ThreadResultWriter(file);
    writers.push(writer);
    const pooled = SERIES.map(encodeRawSeries).map((series) => ({ ...series, data: Buffer.from(series.data) }));
    const neighbour = Buffer.from('a neighbour in the pool');
    const written = await writer.write(row(pooled, job.id), { jobId: job.id, finishedAt: 'x' });
    expect(results.rawSeries(written.resultId)).toEqual(SERIES);
    expect(pooled.every((series) => series.data.byteLength > 0)).toBe(true);
    expect(neighbour.toString()).toBe('a neighbour in the pool');
    db.close();
  });

  it('writes the same rows as the in-process writer', async () => {
    const threaded = setup();
    const inProcess = setup();
    const writer = new ThreadResultWriter(threaded.file);
    writers.push(writer);
    const a = await writer.write(row(SERIES.map(encodeRawSeries), threaded.job.id), { jobId: threaded.job.id, finishedAt: 'x' });
    const b = await inProcessResultWriter(inProcess.db, inProcess.results, inProcess.jobs).write(
      row(SERIES.map(encodeRawSeries), inProcess.job.id),
      {
        jobId: inProcess.job.id,
        finishedAt: 'x',
      },
    );
    const read = (s: ReturnType<typeof setup>, id: number) => ({ ...s.results.get(id), rawSeries: s.results.rawSeries(id) });
    expect(read(threaded, a.resultId)).toEqual({ ...read(inProcess, b.resultId), jobId: threaded.job.id });
    threaded.db.close();
    inProcess.db.close();
  });

  it('rolls the whole write back when a part fails, and rejects with the SQLite code', async () => {
    const { file, db, jobs, results, job } = setup();
    const writer = new ThreadResultWriter(file);
    writers.push(writer);
    const broken = { ...encodeRawSeries(SERIES[0]!), encoding: null as unknown as string };
    const failure = await writer.write(row([broken], job.id), { jobId: job.id, finishedAt: 'x' }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: expect.stringMatching(/^SQLITE_CONSTRAINT/) });
    expect(results.latestForGpu(gpuIdentity().uuid)).toBeNull();
    expect(jobs.get(job.id)?.state).toBe('running');
    db.close();
  });

  it('fails a write to a database it cannot open as a store write error (the job fails with TOPOD_ERR_STORE_WRITE)', async () => {
    const writer = new ThreadResultWriter(path.join(tempDir(), 'missing.sqlite'));
    writers.push(writer);
    const failure = await writer.write(row([], null), null).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'SQLITE_CANTOPEN' });
    expect(isStoreWriteError(failure)).toBe(true);
  });
});
