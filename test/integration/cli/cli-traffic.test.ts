/**
 * Traffic end to end on a daemon in this process (simulated H100): never
 * measured (404 naming the opt-in probe), `topod probe --only traffic`, then
 * `topod traffic` in words and as JSON; a later full probe keeps the traffic.
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

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (chunk: Buffer) => out.push(chunk.toString()));
  stderr.on('data', (chunk: Buffer) => err.push(chunk.toString()));
  const code = await runCli(args, { stdout, stderr, env: {} });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

describe('topod traffic against a daemon in this process (simulated H100)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'topod-cli-traffic-'));
  let daemon: Daemon;
  let url: string;

  beforeAll(async () => {
    const config = loadConfig({
      TOPOD_BACKEND: 'sim',
      TOPOD_DB: path.join(dir, 'topod.sqlite'),
      TOPOD_PORT: '0',
      TOPOD_NVML_LIB: '/nonexistent/libnvidia-ml.so.1',
      TOPOD_LOCK_DIR: dir,
    });
    daemon = await createDaemon(config, { logger: pino({ level: 'silent' }) });
    url = await daemon.app.listen({ host: '127.0.0.1', port: 0 });
    await daemon.start();
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
