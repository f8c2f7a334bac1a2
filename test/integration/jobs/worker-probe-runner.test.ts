/**
 * The daemon's probes run in worker threads (issue 17: the event loop only
 * serves): a simulated GPU rebuilt from its recipe is measured and analysed
 * there, progress and the result come back, an abort stops it, and a
 * failure keeps its code across the thread boundary.
 */
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkerProbeRunner } from '../../../server/jobs/worker-probe-runner.js';
import type { ProbeRunRequest } from '../../../server/jobs/probe-runner.js';
import { SimulatedBackend } from '../../../server/gpu/sim/index.js';
import { gpuIdentity } from '../../helpers/fakes.js';

const logger = pino({ level: 'silent' });

describe('WorkerProbeRunner', () => {
  const runner = new WorkerProbeRunner({
    recipe: { kind: 'sim', models: ['h100-sxm5-80gb'], carveoutPercent: 0 },
    concurrency: 2,
    logLevel: 'silent',
  });
  afterAll(() => runner.close());

  async function request(
    overrides: Partial<ProbeRunRequest> = {},
  ): Promise<{ request: ProbeRunRequest; phases: string[]; opened: unknown[] }> {
    const [gpu] = await new SimulatedBackend({ models: ['h100-sxm5-80gb'] }).listDevices();
    const phases: string[] = [];
    const opened: unknown[] = [];
    const base: ProbeRunRequest = {
      jobId: 'job-1',
      gpu: gpu!,
      only: ['shared'],
      signal: new AbortController().signal,
      logger: logger.child({ jobId: 'job-1' }),
      onProgress: (phase) => phases.push(phase),
      onOpened: (pid) => opened.push(pid),
      afterMeasuring: async () => ({
        storedRaw: null,
        previous: null,
        meta: {
          gpu: gpu!,
          simulated: true,
          probeVersion: 'sim-1',
          analysisVersion: 'v',
          jobId: 'job-1',
          only: ['shared'],
          startedAt: new Date(0),
          finishedAt: new Date(1000),
        },
      }),
    };
    return { request: { ...base, ...overrides }, phases, opened };
  }

  it('measures and analyses a simulated GPU in a worker thread, reporting progress', async () => {
    const { request: req, phases, opened } = await request();
    const product = await runner.run(req);
    expect(product.threadId).toBeGreaterThan(0);
    expect(product.document.elements.shared?.latency).toBeDefined();
    expect(product.raw.length).toBeGreaterThan(0);
    expect(opened).toEqual([undefined]);
    expect(phases).toContain('hello');
  }, 120_000);

  it('stops when the job is aborted, with the abort reason', async () => {
    const abort = new AbortController();
    const { request: req } = await request({
      only: null,
      signal: abort.signal,
      onProgress: (phase) => phase === 'calibrate' && abort.abort(new Error('cancelled by the test')),
    });
    await expect(runner.run(req)).rejects.toThrow('cancelled by the test');
  }, 120_000);

  it("keeps a failure's code across the thread", async () => {
    const { request: req } = await request({ gpu: gpuIdentity({ uuid: 'GPU-unknown', name: 'No Such GPU' }) });
    await expect(runner.run(req)).rejects.toMatchObject({
      code: 'unsupported',
      message: expect.stringMatching(/no simulated model matches GPU "No Such GPU"/),
    });
  }, 120_000);
});
