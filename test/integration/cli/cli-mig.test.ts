/**
 * `topod gpus` on a GPU with MIG on, as `nvidia-smi -L` lists one: each MIG
 * device's UUID under its GPU, with its profile. In this process, against a
 * daemon on the simulated H100 whose NVML is the fake libnvidia-ml serving
 * the mixed-MIG scenario (test/fixtures/nvml/h100-80gb-mig-mixed.json).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon } from '../../../server/daemon.js';
import { runCliCaptured as cli, startSimDaemon } from '../../helpers/cli-run.js';
import type { GpuSummary, MigDeviceSummary } from '../../../server/model/gpu.js';
import { until } from '../../helpers/fakes.js';
import { FAKE_LIBRARY, ScenarioFile, assertNativeBuilt } from '../nvml/fake-nvml.js';

describe('topod gpus with MIG devices', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'topod-cli-mig-'));
  let scenario: ScenarioFile;
  let daemon: Daemon;
  let url: string;

  beforeAll(async () => {
    assertNativeBuilt();
    scenario = new ScenarioFile('h100-80gb-mig-mixed.json');
    ({ daemon, url } = await startSimDaemon(dir, FAKE_LIBRARY));
    await until(() => (daemon.topology.listGpus()[0]?.migDeviceUuids.length ?? 0) > 0, 30_000);
  }, 120_000);

  afterAll(async () => {
    await daemon?.close();
    scenario?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists every MIG device UUID under its GPU with its profile, as nvidia-smi -L does', async () => {
    const { gpus } = JSON.parse((await cli(['gpus', '-o', 'json', '--url', url])).stdout) as { gpus: GpuSummary[] };
    const gpu = gpus[0]!;
    expect(gpu.migDeviceUuids.length).toBeGreaterThan(1);
    const run = await cli(['gpus', '-o', 'table', '--url', url]);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2 + 1 + gpu.migDeviceUuids.length);
    for (const [device, uuid] of gpu.migDeviceUuids.entries()) {
      const summary = (await (await fetch(`${url}/v1/gpus/${uuid}`)).json()) as MigDeviceSummary;
      expect(summary.profileName).toMatch(/^MIG \d+g\.\d+gb/);
      expect(lines[3 + device]).toMatch(new RegExp(`^${gpu.index}:${device} +${uuid} +${summary.profileName} Device ${device} `));
    }
    // Rows only: the second column is every UUID, GPU then its MIG devices (what a script hands to CUDA_VISIBLE_DEVICES).
    const rows = await cli(['gpus', '-o', 'wide', '--no-headers', '--url', url]);
    expect(
      rows.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split(/ +/)[1]),
    ).toEqual([gpu.uuid, ...gpu.migDeviceUuids]);
  }, 60_000);
});
