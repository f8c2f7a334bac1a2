import { describe, expect, it, vi } from 'vitest';
import { ProbeScheduler, EnqueueConflict } from '../../../server/jobs/scheduler.js';
import { openDatabase } from '../../../server/store/database.js';
import { GpuStore } from '../../../server/store/gpus.js';
import { JobStore } from '../../../server/store/jobs.js';
import { ResultStore } from '../../../server/store/results.js';
import type { ProbeJob } from '../../../server/model/job.js';
import {
  analysedElements,
  controlledDiscover,
  fakeAnalysis,
  fakeLifecycle,
  gpuIdentity,
  inertBackend,
  outcome,
  silentLogger,
  until,
} from '../../helpers/fakes.js';

const gpuA = gpuIdentity();
const gpuB = gpuIdentity({ uuid: 'GPU-bbbbbbbb-2222-3333-4444-555555555555', index: 1 });

function setup(concurrency = 1) {
  const db = openDatabase(':memory:');
  const gpus = new GpuStore(db);
  gpus.seen(gpuA);
  gpus.seen(gpuB);
  const jobs = new JobStore(db);
  const results = new ResultStore(db);
  const backend = inertBackend();
  const discover = controlledDiscover();
  const scheduler = new ProbeScheduler({
    jobs,
    backend,
    discover,
    lifecycle: fakeLifecycle({ db, results, jobs }, fakeAnalysis('a1')),
    concurrency,
    logger: silentLogger,
    progressWriteMs: 0,
  });
  const events: string[] = [];
  for (const type of ['queued', 'started', 'succeeded', 'failed', 'cancelled'] as const) {
    scheduler.on(type, (job: ProbeJob) => events.push(`${type}:${job.gpuUuid.slice(4, 8)}`));
  }
  return { db, jobs, results, backend, discover, scheduler, events };
}

const request = { reason: 'test', requestedBy: 'test', only: null, force: false };

describe('ProbeScheduler', () => {
  it('stores the result, raw series and job state together', async () => {
    const { discover, scheduler, results, jobs } = setup();
    const job = scheduler.enqueue(gpuA, request);
    await until(() => discover.calls.length === 1);
    discover.calls[0]?.resolve(outcome(123));
    await scheduler.whenIdle();
    const finished = jobs.get(job.id);
    expect(finished).toMatchObject({ state: 'succeeded', progress: 1 });
    const stored = results.get(finished?.resultId as number);
    expect(stored?.document.elements.l1?.size?.value).toBe(123);
    expect(stored?.document).toMatchObject({
      simulated: true,
      probe: { probeVersion: 'test-probe-1', analysisVersion: 'a1', driverVersion: gpuA.driverVersion, jobId: job.id },
    });
    expect(results.rawSeries(stored?.id as number)).toHaveLength(1);
  });

  it('tells of a stored result one turn after storing it; a cancel in between is refused and the job stays succeeded', async () => {
    const { discover, scheduler, jobs, events } = setup();
    const job = scheduler.enqueue(gpuA, request);
    await until(() => discover.calls.length === 1);
    const inBetween: Array<{ cancelled: boolean; stored: string | undefined; read: string; told: boolean; active: string | undefined }> =
      [];
    const info = silentLogger.info.bind(silentLogger);
    const spy = vi.spyOn(silentLogger, 'info').mockImplementation(((...args: Parameters<typeof info>) => {
      if (args[1] === 'probe job succeeded') {
        inBetween.push({
          cancelled: scheduler.cancel(job.id, 'a forced probe'),
          stored: jobs.get(job.id)?.state,
          read: scheduler.asTold(jobs.get(job.id)!).state,
          told: events.includes('succeeded:1111'),
          active: scheduler.activeFor(gpuA.uuid)?.state,
        });
      }
      return info(...args);
    }) as typeof info);
    try {
      discover.calls[0]?.resolve(outcome(123));
      await scheduler.whenIdle();
    } finally {
      spy.mockRestore();
    }
    // Stored, not yet told: memory, and a read of the job through the scheduler, still say running; the cancel
    // does not undo the stored result.
    expect(inBetween).toEqual([{ cancelled: false, stored: 'succeeded', read: 'running', told: false, active: 'running' }]);
    expect(scheduler.asTold(jobs.get(job.id)!).state).toBe('succeeded');
    expect(jobs.get(job.id)).toMatchObject({ state: 'succeeded' });
    expect(events).toEqual(['queued:1111', 'started:1111', 'succeeded:1111']);
    expect(scheduler.activeFor(gpuA.uuid)).toBeNull();
  });

  it('refuses a second job for the same GPU while one is active', () => {
    const { scheduler } = setup();
    const first = scheduler.enqueue(gpuA, request);
    expect(() => scheduler.enqueue(gpuA, request)).toThrow(EnqueueConflict);
    try {
      scheduler.enqueue(gpuA, request);
    } catch (error) {
      expect((error as EnqueueConflict).job.id).toBe(first.id);
    }
  });

  it('runs different GPUs in parallel only up to the concurrency', async () => {
    const serial = setup(1);
    serial.scheduler.enqueue(gpuA, request);
    serial.scheduler.enqueue(gpuB, request);
    await until(() => serial.discover.calls.length === 1);
    await new Promise((r) => setTimeout(r, 30));
    expect(serial.discover.calls).toHaveLength(1);
    serial.discover.calls[0]?.resolve(outcome());
    await until(() => serial.discover.calls.length === 2);
    serial.discover.calls[1]?.resolve(outcome());
    await serial.scheduler.whenIdle();

    const parallel = setup(2);
    parallel.scheduler.enqueue(gpuA, request);
    parallel.scheduler.enqueue(gpuB, request);
    await until(() => parallel.discover.calls.length === 2);
    for (const call of parallel.discover.calls) call.resolve(outcome());
    await parallel.scheduler.whenIdle();
    expect(parallel.events.filter((e) => e.startsWith('succeeded'))).toHaveLength(2);
  });

  it('a failed probe stores nothing and leaves earlier results in place', async () => {
    const { discover, scheduler, results, jobs } = setup();
    scheduler.enqueue(gpuA, request);
    await until(() => discover.calls.length === 1);
    discover.calls[0]?.resolve(outcome(1));
    await scheduler.whenIdle();
    const failing = scheduler.enqueue(gpuA, request);
    await until(() => discover.calls.length === 2);
    discover.calls[1]?.reject(Object.assign(new Error('kernel fault'), { code: 'kernel_fault' }));
    await scheduler.whenIdle();
    expect(jobs.get(failing.id)).toMatchObject({
      state: 'failed',
      error: { code: 'TOPOD_ERR_PROBE_KERNEL_FAULT', message: 'kernel fault' },
    });
    expect(results.history(gpuA.uuid)).toHaveLength(1);
  });

  it('a partial probe stores the series it did not re-measure too, so its result rebuilds from its own raw data', async () => {
    const { discover, scheduler, results } = setup();
    scheduler.enqueue(gpuA, request);
    await until(() => discover.calls.length === 1);
    discover.calls[0]?.resolve(outcome(1, { l2: 99 }));
    await scheduler.whenIdle();
    scheduler.enqueue(gpuA, { ...request, only: ['l1'] });
    await until(() => discover.calls.length === 2);
    discover.calls[1]?.resolve(outcome(2));
    await scheduler.whenIdle();
    const latest = results.latestForGpu(gpuA.uuid);
    expect(latest?.document.elements.l1?.size?.value).toBe(2);
    expect(latest?.document.elements.l2?.size?.value).toBe(99);
    expect(latest?.document.probe.only).toEqual(['l1']);
    // Its own raw series: the fresh L1 sweep and the L2 sweep carried from the previous result.
    const raw = results.rawSeries(latest?.id as number);
    expect(raw.map((series) => series.name).sort()).toEqual(['l1.size.sweep', 'l2.size.sweep']);
    expect(fakeAnalysis().reanalyse(raw).elements).toEqual(analysedElements(latest?.document.elements));
    // The L2 was measured by the first probe, the L1 by this one.
    expect(latest?.document.elements.l1?.measuredAt).toBe(latest?.document.probe.startedAt);
    expect(latest?.document.elements.l2?.measuredAt).not.toBe(latest?.document.probe.startedAt);
  });

  it('cancel marks the job at once, aborts the probe and stores nothing', async () => {
    const { discover, scheduler, jobs, results } = setup();
    const job = scheduler.enqueue(gpuA, request);
    await until(() => discover.calls.length === 1);
    expect(scheduler.cancel(job.id, 'testing')).toBe(true);
    expect(jobs.get(job.id)?.state).toBe('cancelled');
    const next = scheduler.enqueue(gpuA, request);
    await until(() => discover.calls.length === 2);
    expect(discover.calls[0]?.signal?.aborted).toBe(true);
    discover.calls[1]?.resolve(outcome());
    await scheduler.whenIdle();
    expect(jobs.get(next.id)?.state).toBe('succeeded');
    expect(results.history(gpuA.uuid)).toHaveLength(1);
  });

  it('close cancels queued and running jobs and closes the backend', async () => {
    const { discover, scheduler, jobs, backend } = setup();
    const running = scheduler.enqueue(gpuA, request);
    const queued = scheduler.enqueue(gpuB, request);
    await until(() => discover.calls.length === 1);
    await scheduler.close();
    expect(jobs.get(running.id)?.state).toBe('cancelled');
    expect(jobs.get(queued.id)?.state).toBe('cancelled');
    expect(backend.closed).toBe(1);
  });

  it('aborts a probe that overruns the job timeout', async () => {
    const db = openDatabase(':memory:');
    new GpuStore(db).seen(gpuA);
    const jobs = new JobStore(db);
    const discover = controlledDiscover();
    const scheduler = new ProbeScheduler({
      jobs,
      backend: inertBackend(),
      discover,
      lifecycle: fakeLifecycle({ db, results: new ResultStore(db), jobs }, fakeAnalysis('a1')),
      concurrency: 1,
      logger: silentLogger,
      jobTimeoutMs: 20,
    });
    const job = scheduler.enqueue(gpuA, request);
    await scheduler.whenIdle();
    expect(jobs.get(job.id)).toMatchObject({ state: 'failed', error: { code: 'TOPOD_ERR_JOB_TIMEOUT' } });
  });
});
