/**
 * The two timeouts a probe job can meet fail it with two different codes:
 * one probe request that never answers (the channel kills the probe) is
 * TOPOD_ERR_PROBE_REQUEST_TIMEOUT; the whole job running past jobTimeoutMs
 * is TOPOD_ERR_JOB_TIMEOUT.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../../server/errors.js';
import type { MeasurementBackend } from '../../../server/gpu/backend.js';
import { NativeBackend } from '../../../server/gpu/native.js';
import { ProbeScheduler, type Discover } from '../../../server/jobs/scheduler.js';
import type { GpuIdentity } from '../../../server/model/gpu.js';
import { openDatabase } from '../../../server/store/database.js';
import { GpuStore } from '../../../server/store/gpus.js';
import { JobStore } from '../../../server/store/jobs.js';
import { ResultStore } from '../../../server/store/results.js';
import { controlledDiscover, fakeLifecycle, gpuIdentity, inertBackend, silentLogger } from '../../helpers/fakes.js';

const STUB = path.join(path.dirname(fileURLToPath(import.meta.url)), '../probe/stub-probe.mjs');
/** The first device the stub probe lists. */
const STUB_GPU = gpuIdentity({ uuid: 'GPU-00000000-0000-0000-0000-000000000000', index: 0 });
const REQUEST = { reason: 'test', requestedBy: 'test', only: null, force: false };

/** A discover that sends the stub one request it never answers. */
const hangingDiscover: Discover = (channel, options) =>
  channel.request('pchase', { behave: 'hang' } as never, options.signal ? { signal: options.signal } : {}).then(() => {
    throw new Error('the stub answered a hang');
  });

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function runOneJob(backend: MeasurementBackend, discover: Discover, gpu: GpuIdentity, jobTimeoutMs: number) {
  const db = openDatabase(':memory:');
  new GpuStore(db).seen(gpu);
  const jobs = new JobStore(db);
  const scheduler = new ProbeScheduler({
    jobs,
    backend,
    discover,
    lifecycle: fakeLifecycle({ db, results: new ResultStore(db), jobs }),
    concurrency: 1,
    logger: silentLogger,
    jobTimeoutMs,
  });
  cleanups.push(async () => {
    await scheduler.close();
    db.close();
  });
  const job = scheduler.enqueue(gpu, REQUEST);
  await scheduler.whenIdle();
  return jobs.get(job.id);
}

describe('probe job timeouts', () => {
  it('a probe request that never answers fails the job with TOPOD_ERR_PROBE_REQUEST_TIMEOUT', async () => {
    const backend = new NativeBackend({ probePath: STUB, requestTimeoutMs: 300 });
    const started = Date.now();
    const job = await runOneJob(backend, hangingDiscover, STUB_GPU, 20_000);
    expect(job).toMatchObject({ state: 'failed', error: { code: ERROR_CODES.PROBE_REQUEST_TIMEOUT } });
    expect(job?.error?.code).toBe('TOPOD_ERR_PROBE_REQUEST_TIMEOUT');
    expect(job?.error?.message).toMatch(/pchase did not answer within 300 ms/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a job that runs past jobTimeoutMs fails with TOPOD_ERR_JOB_TIMEOUT, another code', async () => {
    const job = await runOneJob(inertBackend(), controlledDiscover(), gpuIdentity(), 50);
    expect(job).toMatchObject({ state: 'failed', error: { code: ERROR_CODES.JOB_TIMEOUT } });
    expect(job?.error?.code).toBe('TOPOD_ERR_JOB_TIMEOUT');
    expect(job?.error?.message).toMatch(/did not finish within 50 ms/);
  });

  it('the job timeout wins over a request still waiting on the probe', async () => {
    const backend = new NativeBackend({ probePath: STUB, requestTimeoutMs: 20_000 });
    const job = await runOneJob(backend, hangingDiscover, STUB_GPU, 300);
    expect(job).toMatchObject({ state: 'failed', error: { code: ERROR_CODES.JOB_TIMEOUT } });
  });
});
