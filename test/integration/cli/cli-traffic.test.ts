/**
 * Traffic end to end on a daemon in this process (simulated H100): never
 * measured (404 naming the opt-in probe), `topod probe --only traffic`, then
 * `topod traffic` in words and as JSON; a later full probe keeps the traffic.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon } from '../../../server/daemon.js';
import { runCliCaptured as cli, startSimDaemon } from '../../helpers/cli-run.js';

describe('topod traffic against a daemon in this process (simulated H100)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'topod-cli-traffic-'));
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

  it('measures traffic only when asked, predicts from it, and keeps it through a full probe', async () => {
    const before = await cli(['traffic', '0', '--stride', '4KiB', '--footprint', '800MB', '--url', url]);
    expect(before.code).not.toBe(0);
    expect(before.stderr).toContain('"only":["traffic"]');
    const topology = JSON.parse((await cli(['topology', '0', '-o', 'json', '--url', url])).stdout) as { traffic?: unknown };
    expect(topology.traffic ?? null).toBeNull(); // the boot probe is a full one: no traffic

    const probe = await cli(['probe', '0', '--force', '--watch', '--only', 'traffic', '--url', url]);
    expect(probe.code, probe.stderr).toBe(0);
    expect(JSON.parse(probe.stdout)).toMatchObject({ state: 'succeeded', only: ['traffic'] });

    const text = await cli(['traffic', '0', '--stride', '4KiB', '--footprint', '800MB', '--pattern', 'rmw', '-o', 'table', '--url', url]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('rmw (written)');
    expect(text.stdout).toMatch(/read fill [\d.]+ B/);
    const json = JSON.parse((await cli(['traffic', '0', '--stride', '4KiB', '--footprint', '800MB', '--url', url])).stdout) as {
      bytesPerUsefulByte: number;
      used: { readFillBytes: { value: number; method: string } };
    };
    expect(Math.abs(json.bytesPerUsefulByte / (json.used.readFillBytes.value / 4) - 1)).toBeLessThan(0.02);
    expect(json.used.readFillBytes.method).toBe('counters');
    const bad = await cli(['traffic', '0', '--stride', 'lots', '--footprint', '800MB', '--url', url]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--stride');

    const full = await cli(['probe', '0', '--force', '--watch', '--url', url]);
    expect(full.code, full.stderr).toBe(0);
    const after = JSON.parse((await cli(['topology', '0', '-o', 'json', '--url', url])).stdout) as {
      traffic?: { method: string };
      probe: { only: unknown };
    };
    expect(after.probe.only).toBeNull();
    expect(after.traffic?.method).toBe('counters');
  }, 240_000);
});
