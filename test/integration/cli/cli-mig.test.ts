/**
 * `topod gpus` on a GPU with MIG on, as `nvidia-smi -L` lists one: each MIG
 * device's UUID under its GPU, with its profile. In this process, against a
 * daemon on the simulated H100 whose NVML is the fake libnvidia-ml serving
 * the mixed-MIG scenario (test/fixtures/nvml/h100-80gb-mig-mixed.json).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../server/cli/main.js';
import { loadConfig } from '../../../server/config.js';
import { createDaemon, type Daemon } from '../../../server/daemon.js';
import type { GpuSummary, MigDeviceSummary } from '../../../server/model/gpu.js';
import { until } from '../../helpers/fakes.js';
import { FAKE_LIBRARY, ScenarioFile, assertNativeBuilt } from '../nvml/fake-nvml.js';

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const code = await runCli(args, { stdout, stderr, env: {} });
  return { code, stdout: out, stderr: err };
}

describe('topod gpus with MIG devices', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'topod-cli-mig-'));
  let scenario: ScenarioFile;
  let daemon: Daemon;
  let url: string;

  beforeAll(async () => {
    assertNativeBuilt();
    scenario = new ScenarioFile('h100-80gb-mig-mixed.json');
    const config = loadConfig({
      TOPOD_BACKEND: 'sim',
      TOPOD_DB: path.join(dir, 'topod.sqlite'),
      TOPOD_PORT: '0',
      TOPOD_NVML_LIB: FAKE_LIBRARY,
      TOPOD_LOCK_DIR: dir,
    });
    daemon = await createDaemon(config, { logger: pino({ level: 'silent' }) });
    url = await daemon.app.listen({ host: '127.0.0.1', port: 0 });
    await daemon.start();
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
