/**
 * What a probe process is started with comes from config, not from the
 * daemon's environment: its deadline as --deadline-ms, an explicit minimal
 * environment (no TOPOD_* variable, no admin token), and the GPU pin on top.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../server/config.js';
import { selectBackend } from '../../../server/gpu/select-backend.js';
import { silentLogger } from '../../helpers/fakes.js';

const dir = mkdtempSync(path.join(tmpdir(), 'topod-probe-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A probe that answers hello (one device, honouring the pin) and reports its argv and environment on any other op. */
const REPORTER = path.join(dir, 'reporting-probe.mjs');
writeFileSync(
  REPORTER,
  `#!/usr/bin/env node
import { createInterface } from 'node:readline';
if (process.argv.includes('--version')) { console.log('topod-probe 0.0.1-env (protocol 1, nvidia)'); process.exit(0); }
const uuid = 'GPU-0e0e0e0e-0000-0000-0000-000000000000';
const pinned = process.env.CUDA_VISIBLE_DEVICES;
const devices = !pinned || pinned === uuid ? [{ index: 0, uuid, name: 'Env GPU', pciBusId: null, architecture: 'sm_90' }] : [];
createInterface({ input: process.stdin }).on('line', (line) => {
  const req = JSON.parse(line);
  const result = req.op === 'hello'
    ? { probeVersion: '0.0.1-env', protocolVersion: 1, vendor: 'nvidia', runtimeVersion: 13000, driverVersion: 13000, ops: ['hello', 'pchase'], devices }
    : { argv: process.argv.slice(2), env: process.env };
  process.stdout.write(JSON.stringify({ id: req.id, ok: true, result }) + '\\n');
});
`,
  { mode: 0o755 },
);

describe('the probe process environment', () => {
  it('gets the deadline as an argument and only the runtime variables, pinned to its GPU', async () => {
    const config = loadConfig(
      {
        PATH: process.env.PATH,
        HOME: '/home/topod',
        CUDA_CACHE_PATH: path.join(dir, 'cuda-cache'),
        TOPOD_ADMIN_TOKEN: 'secret-admin-token',
        TOPOD_PROBE_DEADLINE_MS: '4000',
        TOPOD_PROBE_PATH: REPORTER,
        TOPOD_BACKEND: 'native',
        UNRELATED_SECRET: 'nope',
      },
      [],
    );
    const selection = await selectBackend({
      choice: config.backend,
      simModels: config.simModels,
      probePath: config.probePath,
      probeDeadlineMs: config.probeDeadlineMs,
      probeEnv: config.probeEnv,
      logger: silentLogger,
    });
    expect(selection.reason).toBe('native probe');
    const backend = selection.backend!;
    try {
      expect(backend.probeVersion).toBe('0.0.1-env');
      const [gpu] = await backend.listDevices();
      const channel = await backend.open(gpu!);
      const seen = (await channel.request('pchase', {} as never)) as unknown as { argv: string[]; env: Record<string, string> };
      expect(seen.argv).toEqual(['--deadline-ms', '4000']);
      expect(seen.env).toEqual({
        PATH: process.env.PATH,
        HOME: '/home/topod',
        CUDA_CACHE_PATH: path.join(dir, 'cuda-cache'),
        CUDA_VISIBLE_DEVICES: gpu!.uuid,
      });
    } finally {
      await backend.close();
    }
  });
});
