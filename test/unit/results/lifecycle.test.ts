/**
 * The result lifecycle (issue 18: one owner of a result's life): a probe's
 * outcome is analysed once and stored with its job's end; what it returns is
 * what a later read gives; a partial probe loads the previous series once;
 * re-analysis writes a new row; choosing what to serve never writes.
 */
import { describe, expect, it } from 'vitest';
import type { ProbeJob } from '../../../server/model/job.js';
import { openDatabase } from '../../../server/store/database.js';
import { GpuStore } from '../../../server/store/gpus.js';
import { JobStore } from '../../../server/store/jobs.js';
import { ResultStore } from '../../../server/store/results.js';
import { ProbePolicy } from '../../../server/topology/probe-policy.js';
import { fakeAnalysis, fakeLifecycle, gpuIdentity, outcome } from '../../helpers/fakes.js';

const gpu = gpuIdentity();
const measuredBy = { kind: 'sim', simulated: true, probeVersion: 'p1' };

function setup(analysis = fakeAnalysis('a1')) {
  const db = openDatabase(':memory:');
  new GpuStore(db).seen(gpu);
  const jobs = new JobStore(db);
  const results = new ResultStore(db);
  return { db, jobs, results, analysis, lifecycle: fakeLifecycle({ db, results, jobs }, analysis) };
}

function runningJob(jobs: JobStore, only: ProbeJob['only'] = null): ProbeJob {
  const job = jobs.create({ gpuUuid: gpu.uuid, reason: 'test', requestedBy: 'test', only, force: false });
  return jobs.start(job.id) as ProbeJob;
}

const times = { startedAt: new Date('2026-11-01T00:00:00.000Z'), finishedAt: new Date('2026-11-01T00:00:02.000Z') };

describe('ResultLifecycle', () => {
  it('stores a probe with its job in one step and returns exactly what a read of both gives', async () => {
    const s = setup();
    const { result, job } = await s.lifecycle.record(runningJob(s.jobs), { gpu, measurement: outcome(500), measuredBy, ...times });
    expect(result).toEqual(s.results.get(result.id));
    expect(job).toEqual(s.jobs.get(job.id));
    expect(job).toMatchObject({ state: 'succeeded', resultId: result.id, progress: 1 });
    expect(result.document.elements.l1?.size?.value).toBe(500);
    expect(s.analysis.reanalysed).toBe(1);
  });

  it("analyses a partial probe once, with the previous result's series of what it did not re-measure", async () => {
    const s = setup();
    await s.lifecycle.record(runningJob(s.jobs), { gpu, measurement: outcome(100, { l2: 4000 }), measuredBy, ...times });
    const analysedBefore = s.analysis.reanalysed;
    const partial = { raw: outcome(200).raw, warnings: ['l1 only'] };
    const { result } = await s.lifecycle.record(runningJob(s.jobs, ['l1']), { gpu, measurement: partial, measuredBy, ...times });
    expect(s.analysis.reanalysed - analysedBefore).toBe(1);
    expect(result.document.elements.l1?.size?.value).toBe(200);
    expect(result.document.elements.l2?.size?.value).toBe(4000);
    expect(result.document.warnings).toEqual(['l1 only']);
    // The stored series rebuild the whole result on their own.
    expect(
      s.results
        .rawSeries(result.id)
        .map((series) => series.name)
        .sort(),
    ).toEqual(['l1.size.sweep', 'l2.size.sweep']);
  });

  it('stores nothing when the job is cancelled while its series are analysed', async () => {
    const s = setup();
    const abort = new AbortController();
    abort.abort(new Error('cancelled'));
    await expect(
      s.lifecycle.record(runningJob(s.jobs), { gpu, measurement: outcome(1), measuredBy, ...times, signal: abort.signal }),
    ).rejects.toThrow('cancelled');
    expect(s.results.latestForGpu(gpu.uuid)).toBeNull();
  });

  it('re-analyses into a new row that says where it came from; selecting what to serve never writes', async () => {
    const first = setup(fakeAnalysis('a1'));
    const { result: original } = await first.lifecycle.record(runningJob(first.jobs), {
      gpu,
      measurement: outcome(10),
      measuredBy,
      ...times,
    });
    const newer = fakeLifecycle(first, fakeAnalysis('a2', 3));
    const policy = new ProbePolicy({ results: first.results, probeVersion: 'p1', isOutdated: (r) => newer.isOutdated(r) });
    const served = policy.select(gpu);
    expect(served).toMatchObject({ outdated: true, staleReason: null, result: { id: original.id } });
    expect(first.results.history(gpu.uuid)).toHaveLength(1);
    const rebuilt = await newer.reanalyse(original);
    expect(rebuilt).toEqual(first.results.get(rebuilt.id));
    expect(rebuilt).toMatchObject({ reanalysedFrom: original.id, analysisVersion: 'a2' });
    expect(rebuilt.document.elements.l1?.size?.value).toBe(30);
    expect(first.results.rawSeries(rebuilt.id)).toEqual(first.results.rawSeries(original.id));
    expect(policy.select(gpu)).toMatchObject({ outdated: false, result: { id: rebuilt.id } });
  });
});
