import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ProbeError } from '../../../server/protocol/probe-error.js';
import { NativeBackend, runtimeDriverVersion } from '../../../server/gpu/native.js';

const STUB = path.join(path.dirname(fileURLToPath(import.meta.url)), 'stub-probe.mjs');
const dir = mkdtempSync(path.join(tmpdir(), 'topod-native-backend-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('NativeBackend over the stub probe', () => {
  it('is unavailable without a binary, and says where it looked', async () => {
    const missing = path.join(dir, 'no-such-probe');
    const check = await NativeBackend.available({ probePath: missing });
    expect(check.ok).toBe(false);
    expect(check.reason).toContain(missing);
  });

  it('is unavailable when the probe sees no GPU', async () => {
    const check = await NativeBackend.available({ probePath: STUB, env: { ...process.env, STUB_DEVICES: '0' } });
    expect(check).toEqual({ ok: false, reason: expect.stringContaining('sees no GPU') });
  });

  it('is unavailable when the binary runs but does not speak the protocol', async () => {
    const bogus = path.join(dir, 'bogus-probe');
    writeFileSync(bogus, '#!/bin/sh\necho hello there\nexit 0\n', { mode: 0o755 });
    const check = await NativeBackend.available({ probePath: bogus });
    expect(check.ok).toBe(false);
    expect(check.reason).toMatch(/hello failed/);
  });

  it('takes the probe path it is given (config reads TOPOD_PROBE_PATH, not the backend) and reads its version', async () => {
    const backend = new NativeBackend({ probePath: STUB, env: { ...process.env, TOPOD_PROBE_PATH: path.join(dir, 'ignored') } });
    expect(backend.probeVersion).toBe('9.9.9-stub');
    expect((await NativeBackend.available({ probePath: STUB })).ok).toBe(true);
  });

  it('lists devices with the runtime driver version and opens channels pinned by UUID', async () => {
    const backend = new NativeBackend({ probePath: STUB });
    const gpus = await backend.listDevices();
    expect(gpus.map((g) => g.uuid)).toEqual(['GPU-00000000-0000-0000-0000-000000000000', 'GPU-00000001-0000-0000-0000-000000000000']);
    expect(gpus[1]).toMatchObject({ index: 1, vendor: 'nvidia', driverVersion: 'cuda-13000', pciBusId: '00000000:01:00.0' });
    const channel = await backend.open(gpus[1]!);
    const hello = await channel.request('hello', {});
    expect(hello.devices.map((d) => d.uuid)).toEqual([gpus[1]!.uuid]);
    await backend.close();
    await expect(channel.request('hello', {})).rejects.toMatchObject({ code: 'closed' });
  });

  it('reports itself unhealthy once its probe executable is gone (readiness)', async () => {
    const copy = path.join(dir, 'vanishing-probe.mjs');
    writeFileSync(copy, readFileSync(STUB), { mode: 0o755 });
    const backend = new NativeBackend({ probePath: copy });
    expect(backend.health()).toEqual({ ok: true, detail: expect.stringContaining(copy) });
    rmSync(copy);
    expect(backend.health()).toEqual({ ok: false, detail: expect.stringContaining('gone or not executable') });
  });

  it('refuses a GPU the pinned probe does not see', async () => {
    const backend = new NativeBackend({ probePath: STUB });
    const ghost = {
      uuid: 'GPU-deadbeef-0000-0000-0000-000000000000',
      index: 5,
      name: 'ghost',
      vendor: 'nvidia' as const,
      pciBusId: null,
      driverVersion: 'x',
    };
    const error = await backend.open(ghost).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProbeError);
    expect((error as ProbeError).code).toBe('unsupported');
    await backend.close();
  });

  it('formats driver versions per vendor', () => {
    expect(runtimeDriverVersion({ vendor: 'nvidia', driverVersion: 13000 })).toBe('cuda-13000');
    expect(runtimeDriverVersion({ vendor: 'amd', driverVersion: 50422804 })).toBe('hip-50422804');
  });
});
