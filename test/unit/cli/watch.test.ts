/**
 * `topod probe --watch` through a job that waits for its busy GPU: each
 * reason it waits for is shown once, then the run, then the end, all on
 * stderr (stdout is the outcome's, written by the probe command); a job that
 * fails because the GPU stayed busy ends failed with its code.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { TopodClient } from '../../../server/cli/client.js';
import { jobDurationText, watchJob } from '../../../server/cli/watch.js';
import type { ProbeJob } from '../../../server/model/job.js';
import { makeJob } from '../../integration/api/fake-topology.js';

const BUSY = 'gpu-busy: 1 compute process (2.3 GiB), 100 % utilization';
const SINCE = '2026-01-01T10:00:00.000Z';

/** Plays `updates` through the event stream once watchJob has subscribed; the poll answers the last one. */
async function watch(first: ProbeJob, updates: ProbeJob[]): Promise<{ end: ProbeJob; stderr: string }> {
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const client = { getJson: async () => updates.at(-1) } as unknown as TopodClient;
  const end = await watchJob(client, first, { stderr }, async (onJob) => {
    setImmediate(() => updates.forEach(onJob));
    return () => undefined;
  });
  return { end, stderr: err };
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
      {
        ...waiting,
        state: 'succeeded',
        phase: null,
        progress: 1,
        startedAt: '2026-01-01T10:05:00.000Z',
        finishedAt: '2026-01-01T10:05:04.000Z',
      },
    ]);
    expect(run.end).toMatchObject({ id: 'job-w', state: 'succeeded' });
    expect(jobDurationText(run.end)).toBe(' in 4.0 s');
    expect(run.stderr.split('\n')).toEqual([
      'queued 0%',
      `waiting 0% ${BUSY} (waiting since ${SINCE})`,
      `waiting 0% interfered: ${BUSY} (waiting since ${SINCE})`,
      'running 50% l1',
      'succeeded 100%',
      'succeeded 100% done',
      '',
    ]);
  });

  it('ends failed with TOPOD_ERR_GPU_BUSY when the GPU stays busy past the longest wait', async () => {
    const job = makeJob({ id: 'job-f', state: 'waiting', phase: BUSY, waitingSince: SINCE });
    const error = { code: 'TOPOD_ERR_GPU_BUSY', message: `the GPU stayed busy for 86400 s (longest wait 86400 s): ${BUSY}` };
    const run = await watch(job, [{ ...job, state: 'failed', error, finishedAt: '2026-01-02T10:00:00.000Z' }]);
    expect(run.end).toMatchObject({ state: 'failed', error });
    expect(run.stderr).toBe(`waiting 0% ${BUSY} (waiting since ${SINCE})\nfailed 0% ${BUSY}\n`);
  });
});
