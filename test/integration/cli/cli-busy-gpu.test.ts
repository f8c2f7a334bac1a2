/**
 * The CLI on a GPU another process uses (issue 17), in this process against a
 * daemon on the simulated H100 whose NVML is the fake libnvidia-ml serving
 * the tenant scenario (test/fixtures/nvml/h100-80gb-tenant.json): the first
 * probe waits and `topod jobs --state waiting` / `topod gpus` say so and why;
 * `topod probe --even-if-busy` measures anyway and the topology table ends
 * with the warning that it was measured on a busy GPU.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon } from '../../../server/daemon.js';
import { runCliCaptured as cli, startSimDaemon } from '../../helpers/cli-run.js';
import type { GpuSummary } from '../../../server/model/gpu.js';
import type { ProbeJob } from '../../../server/model/job.js';
import { until } from '../../helpers/fakes.js';
import { FAKE_LIBRARY, ScenarioFile, assertNativeBuilt } from '../nvml/fake-nvml.js';

describe('the CLI on a GPU another process uses', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'topod-cli-busy-'));
  let scenario: ScenarioFile;
  let daemon: Daemon;
  let url: string;

  beforeAll(async () => {
    assertNativeBuilt();
    scenario = new ScenarioFile('h100-80gb-tenant.json');
    ({ daemon, url } = await startSimDaemon(dir, FAKE_LIBRARY, {
      gpuWatch: { firstRetryMs: 60_000, maxRetryMs: 60_000, watchIntervalMs: 50, windowMs: 0 },
    }));
  }, 120_000);

  afterAll(async () => {
    await daemon?.close();
    scenario?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the waiting job with its reason (--state waiting), and the GPU as waiting', async () => {
    await until(() => daemon.topology.listJobs({ state: 'waiting' }).length === 1, 30_000);
    const waiting = await cli(['jobs', '--state', 'waiting', '-o', 'json', '--url', url]);
    expect(waiting.code, waiting.stderr).toBe(0);
    const { jobs } = JSON.parse(waiting.stdout) as { jobs: ProbeJob[] };
    expect(jobs).toEqual([
      expect.objectContaining({
        state: 'waiting',
        phase: expect.stringMatching(/^gpu-busy: 1 compute process \(2\.3 GiB\)/),
        waitingSince: expect.any(String),
      }),
    ]);
    const gpus = JSON.parse((await cli(['gpus', '--url', url])).stdout) as { gpus: GpuSummary[] };
    expect(gpus.gpus[0]?.probe.status).toBe('waiting');
    const unknown = await cli(['jobs', '--state', 'sleeping', '--url', url]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/sleeping.*queued, waiting, running, succeeded, failed, cancelled/s);
  }, 60_000);

  it('probe --even-if-busy measures anyway; the table then warns that the GPU was busy', async () => {
    const probe = await cli(['probe', '0', '--force', '--even-if-busy', '--only', 'shared', '--watch', '--url', url]);
    expect(probe.code, probe.stderr).toBe(0);
    expect(JSON.parse(probe.stdout)).toMatchObject({ state: 'succeeded', evenIfBusy: true });
    const jobs = JSON.parse((await cli(['jobs', '-o', 'json', '--limit', '1', '--url', url])).stdout) as { jobs: ProbeJob[] };
    expect(jobs.jobs[0]).toMatchObject({ state: 'succeeded', evenIfBusy: true });
    const table = await cli(['topology', '0', '-o', 'table', '--url', url]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.trimEnd().split('\n').at(-1)).toMatch(
      /^warning: measured on a busy GPU: 1 other process \(2\.25 GiB\) · SM \d+(–\d+)? MHz · 61 °C · clocks held back: sw-power-cap$/,
    );
  }, 120_000);
});
