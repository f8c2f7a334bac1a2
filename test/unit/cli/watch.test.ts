/**
 * `topod probe --watch` through a job that waits for its busy GPU: each
 * reason it waits for is shown once, then the run, then the end; a job that
 * fails because the GPU stayed busy exits 1 with its code.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { TopodClient } from '../../../server/cli/client.js';
import { watchJob } from '../../../server/cli/watch.js';
import type { ProbeJob } from '../../../server/model/job.js';
import { makeJob } from '../../integration/api/fake-topology.js';

const BUSY = 'gpu-busy: 1 compute process (2.3 GiB), 100 % utilization';
const SINCE = '2026-01-01T10:00:00.000Z';

/** Plays `updates` through the event stream once watchJob has subscribed; the poll answers the last one. */
async function watch(first: ProbeJob, updates: ProbeJob[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const client = { getJson: async () => updates.at(-1) } as unknown as TopodClient;
  const code = await watchJob(client, first, { stdout, stderr }, async (onJob) => {
    setImmediate(() => updates.forEach(onJob));
    return () => undefined;
  });
  return { code, stdout: out, stderr: err };
}

describe('watching a job that waits for its busy GPU', () => {
  it('shows why it waits, once per reason, then the probe to its end', async () => {
    const job = makeJob({ id: 'job-w' });
    const waiting = { ...job, state: 'waiting' as const, phase: BUSY, waitingSince: SINCE };
    const run = await watch(job, [
      waiting,
      { ...waiting },
      { ...waiting, phase: `interfered: ${BUSY}` },
      { ...waiting, state: 'running', phase: 'l1', progress: 0.5, startedAt: '2026-01-01T10:05:00.000Z' },
      { ...waiting, state: 'succeeded', phase: null, progress: 1, startedAt: '2026-01-01T10:05:00.000Z', finishedAt: '2026-01-01T10:05:04.000Z' },
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n')).toEqual([
      'queued 0%',
      `waiting 0% ${BUSY} (waiting since ${SINCE})`,
      `waiting 0% interfered: ${BUSY} (waiting since ${SINCE})`,
      'running 50% l1',
      'succeeded 100%',
      'succeeded 100% done',
      'job job-w succeeded in 4.0 s',
      '',
    ]);
  });

  it('exits 1 with TOPOD_ERR_GPU_BUSY when the GPU stays busy past the longest wait', async () => {
    const job = makeJob({ id: 'job-f', state: 'waiting', phase: BUSY, waitingSince: SINCE });
    const error = { code: 'TOPOD_ERR_GPU_BUSY', message: `the GPU stayed busy for 86400 s (longest wait 86400 s): ${BUSY}` };
    const run = await watch(job, [{ ...job, state: 'failed', error, finishedAt: '2026-01-02T10:00:00.000Z' }]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(`waiting 0% ${BUSY} (waiting since ${SINCE})\nfailed 0% ${BUSY}\n`);
    expect(run.stderr).toBe(`topod: job job-f failed: [TOPOD_ERR_GPU_BUSY] ${error.message}\n`);
  });
});
