/**
 * The daemon's analysis runs in worker threads (issue 17: the event loop only
 * serves), and a worker builds exactly the result the same analysis builds
 * in-process.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { DISCOVERY } from '../../../server/discovery/index.js';
import type { RawSeries } from '../../../server/model/document.js';
import { createAnalysisExecutor } from '../../../server/results/analysis-executor.js';
import { analyseTask, type AnalysisTask } from '../../../server/results/analysis-task.js';
import { decodeRawSeries } from '../../../server/store/raw-codec.js';
import { gpuIdentity } from '../../helpers/fakes.js';
import { HAVE_PER_THREAD_NICE, threadNiceValues, waitForThreadsAtNice } from '../../helpers/thread-nice.js';

const recorded = JSON.parse(readFileSync(new URL('../../fixtures/h100/discovery-run.json', import.meta.url), 'utf8')) as {
  raw: RawSeries[];
};

const task: AnalysisTask = {
  measurement: { raw: recorded.raw, warnings: ['measured: a warning the measurement gave'] },
  storedRaw: null,
  meta: {
    gpu: gpuIdentity(),
    simulated: false,
    probeVersion: 'p1',
    analysisVersion: DISCOVERY.version,
    jobId: 'job-1',
    only: null,
    startedAt: new Date('2026-11-01T00:00:00.000Z'),
    finishedAt: new Date('2026-11-01T00:00:05.000Z'),
  },
  previous: null,
};

describe('analysis executor', () => {
  const pool = createAnalysisExecutor(DISCOVERY, { maxThreads: 1 });
  afterAll(() => pool.close());

  it('analyses server/discovery results in a worker thread, identical to the same analysis in-process', async () => {
    const inWorker = await pool.run(task);
    const inProcess = analyseTask(task, DISCOVERY);
    expect(inProcess.threadId).toBe(0);
    expect(inWorker.threadId).toBeGreaterThan(0);
    expect(inWorker.document).toEqual(inProcess.document);
    expect(inWorker.documentJson).toBe(inProcess.documentJson);
    expect(inWorker.document.warnings[0]).toBe('measured: a warning the measurement gave');
    // The series to store come back encoded and decode to what was measured.
    expect(inWorker.raw.map((series) => decodeRawSeries(series))).toEqual(recorded.raw);
  }, 120_000);

  it('stops a task whose job was cancelled, with the abort reason', async () => {
    const abort = new AbortController();
    const running = pool.run(task, abort.signal);
    abort.abort(new Error('cancelled by the test'));
    await expect(running).rejects.toThrow();
  }, 120_000);

  it.skipIf(!HAVE_PER_THREAD_NICE)(
    'runs its threads at the nice increment it is given, below the calling thread',
    async () => {
      const base = threadNiceValues().get(process.pid)!;
      const niced = createAnalysisExecutor(DISCOVERY, { maxThreads: 1, nice: 7 });
      try {
        expect([...threadNiceValues().values()]).not.toContain(base + 7);
        await niced.run(task);
        // The worker; under tsx, also the module-hooks thread it starts (and which inherits its priority).
        expect((await waitForThreadsAtNice('self', base + 7)).length).toBeGreaterThanOrEqual(1);
        // The calling thread keeps its own priority.
        expect(threadNiceValues().get(process.pid)).toBe(base);
      } finally {
        await niced.close();
      }
    },
    120_000,
  );

  it('analyses a fake discovery in-process (tests inject those)', async () => {
    const fake = createAnalysisExecutor({
      reanalyse: (raw) => ({ elements: {}, device: {}, raw, warnings: ['fake'] }),
      carryOverRaw: (_previous, fresh) => [...fresh],
    });
    const product = await fake.run({ ...task, measurement: { raw: [], warnings: [] } });
    expect(product.threadId).toBe(0);
    expect(product.document.warnings).toEqual(['fake']);
    await fake.close();
  });
});
