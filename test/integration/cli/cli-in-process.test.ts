/**
 * The CLI's commands run in this process (runCli, as bin/topod calls it)
 * against a daemon built in this process too (createDaemon on the simulated
 * H100 with an 8 MiB L2, as server/main.ts builds it): the same paths as cli.test.ts's spawned
 * runs, where coverage can see them. Output is captured from plain streams,
 * so the CLI writes its non-TTY form.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Daemon } from '../../../server/daemon.js';
import { modelById } from '../../../server/gpu/sim/index.js';
import { runCliCaptured as cli, startSimDaemon } from '../../helpers/cli-run.js';
import { DAEMON_TEST_SIM_MODEL } from '../../helpers/daemon-process.js';
import { elementLabel } from '../../../server/faces/documents.js';

/** What the simulated GPU calls itself (NVML's name on a real one). */
const GPU_NAME = modelById(DAEMON_TEST_SIM_MODEL)!.name;

describe('the CLI against a daemon in this process (simulated H100)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'topod-cli-'));
  let daemon: Daemon;
  let url: string;

  beforeAll(async () => {
    ({ daemon, url } = await startSimDaemon(dir, '/nonexistent/libnvidia-ml.so.1'));
    await daemon.whenIdle();
  }, 120_000);

  afterAll(async () => {
    await daemon?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the GPUs, and the topology as a table with every measured element', async () => {
    const gpus = await cli(['gpus', '--url', url]);
    expect(gpus.code).toBe(0);
    expect(gpus.stdout).toContain(GPU_NAME);
    const table = await cli(['topology', '0', '-o', 'table'], { TOPOD_URL: url });
    expect(table.code).toBe(0);
    for (const element of ['l1', 'texture', 'readOnly', 'constantL1', 'constantL15', 'shared', 'l2', 'deviceMemory'])
      expect(table.stdout).toContain(elementLabel(element));
    const json = JSON.parse((await cli(['topology', '0', '-o', 'json', '--url', url])).stdout) as { gpu: { name: string } };
    expect(json.gpu.name).toBe(GPU_NAME);
    const yaml = parse((await cli(['topology', '0', '-o', 'yaml', '--url', url])).stdout) as { gpu: { name: string }; elements: unknown };
    expect(yaml).toMatchObject({ gpu: json.gpu });
    const wide = await cli(['topology', '0', '-o', 'wide', '--no-headers', '--url', url]);
    expect(wide.stdout.trimEnd().split('\n')).toHaveLength(Object.keys(yaml.elements as object).length);
    const mt4g = JSON.parse((await cli(['export', '--format', 'mt4g', '--url', url])).stdout) as Record<string, unknown>;
    expect(Object.keys(mt4g)).toContain('memory');
    expect(parse((await cli(['export', '-o', 'yaml', '--url', url])).stdout)).toEqual(mt4g);
  });

  it('probes with --watch to the end and exits with the job’s state; lists the jobs', async () => {
    const probe = await cli(['probe', '0', '--force', '--watch', '--only', 'shared', '--url', url]);
    expect(probe.code, probe.stderr).toBe(0);
    expect(JSON.parse(probe.stdout)).toMatchObject({ state: 'succeeded', only: ['shared'] });
    expect(probe.stderr).toMatch(/^succeeded 100% done$/m);
    const jobs = await cli(['jobs', '--url', url, '-o', 'json']);
    expect(jobs.code).toBe(0);
    expect((JSON.parse(jobs.stdout) as { jobs: Array<{ state: string }> }).jobs.some((job) => job.state === 'succeeded')).toBe(true);
  }, 60_000);

  it('answers fit advice in words and as JSON, and refuses a size it cannot read', async () => {
    const text = await cli(['fit', '0', '--working-set', '24MiB', '--url', url]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/L2/);
    const json = await cli(['fit', '0', '--working-set', '512KiB', '-o', 'json', '--url', url]);
    expect(JSON.parse(json.stdout)).toHaveProperty('workingSetBytes', 512 * 1024);
    // The flag it had before still works, and says what to write instead.
    const old = await cli(['fit', '0', '--working-set', '512KiB', '--json', '--url', url]);
    expect(JSON.parse(old.stdout)).toEqual(JSON.parse(json.stdout));
    expect(old.stderr).toBe('topod: --json is deprecated: use -o json\n');
    const bad = await cli(['fit', '0', '--working-set', 'lots', '--url', url]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/lots/);
  });

  it('says how to start the daemon when none answers, and names an unknown GPU', async () => {
    const down = await cli(['gpus', '--url', 'http://127.0.0.1:9']);
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/npm start|topod serve/);
    const unknown = await cli(['topology', '7', '--url', url]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/7/);
  });
});
