import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { NvmlAddonLoadError } from '../../../server/dynamic/errors.js';
import { loadNvmlAddon } from '../../../server/dynamic/nvml-addon.js';
import type { NvmlAddon, RawNvmlSnapshot } from '../../../server/dynamic/nvml-raw.js';
import { NvmlSource } from '../../../server/dynamic/nvml-source.js';

const RAW: RawNvmlSnapshot = {
  libraryPath: '/fake/libnvidia-ml.so.1',
  driverVersion: '580.95.05',
  cudaDriverVersion: 13000,
  deviceCount: 0,
  devices: [],
  degraded: [],
  reinitCount: 2,
  readMicros: 1500,
};

function nativeError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, stage: 'init', nvmlLibrary: 'libnvidia-ml.so.1' });
}

function stubAddon(overrides: Partial<NvmlAddon> = {}): NvmlAddon {
  return {
    read: vi.fn(async () => structuredClone(RAW)),
    open: vi.fn(async () => undefined),
    close: vi.fn(async () => undefined),
    status: vi.fn(() => ({ loaded: true, references: 1, reinitCount: 0 })),
    ...overrides,
  };
}

const logger = () => ({ info: vi.fn(), warn: vi.fn(), debug: vi.fn() });

describe('NvmlSource', () => {
  it('opens one session, reads, and reports the cost of the read', async () => {
    const addon = stubAddon();
    const source = new NvmlSource({ addon, libraryPath: '/fake/libnvidia-ml.so.1' });
    const first = await source.read();
    await source.read();
    expect(first).toMatchObject({ available: true, reason: null, driverVersion: '580.95.05' });
    expect(addon.open).toHaveBeenCalledTimes(1);
    expect(addon.read).toHaveBeenCalledWith({ libraryPath: '/fake/libnvidia-ml.so.1' });
    expect(source.lastRead).toMatchObject({ nativeMs: 1.5, reinitCount: 2, libraryPath: '/fake/libnvidia-ml.so.1' });
    await source.close();
    expect(addon.close).toHaveBeenCalledTimes(1);
  });

  it('turns a failing init into available:false with the code, logs it once, and recovers', async () => {
    let failing = true;
    const addon = stubAddon({
      open: vi.fn(async () => {
        if (failing) throw nativeError('NVML_ERROR_DRIVER_NOT_LOADED', 'nvmlInit failed: NVML_ERROR_DRIVER_NOT_LOADED');
      }),
    });
    const log = logger();
    const source = new NvmlSource({ addon, logger: log });
    const down = await source.read();
    await source.read();
    expect(down.available).toBe(false);
    expect(down.reason).toBe('NVML_ERROR_DRIVER_NOT_LOADED: nvmlInit failed: NVML_ERROR_DRIVER_NOT_LOADED');
    expect(down.devices).toEqual([]);
    expect(log.warn).toHaveBeenCalledTimes(1);
    failing = false;
    expect((await source.read()).available).toBe(true);
    expect(log.info).toHaveBeenCalledTimes(1);
  });

  it('reports an addon that cannot be loaded as unavailable instead of throwing', async () => {
    const source = new NvmlSource({
      addon: () => {
        throw new NvmlAddonLoadError(['/x/topod_nvml.node: not found'], 'build it');
      },
    });
    const snapshot = await source.read();
    expect(snapshot.available).toBe(false);
    expect(snapshot.reason).toContain('TOPOD_ERR_NVML_ADDON_LOAD');
    expect(snapshot.reason).toContain('/x/topod_nvml.node: not found');
  });

  it('answers unavailable after close without touching the addon', async () => {
    const addon = stubAddon();
    const source = new NvmlSource({ addon });
    await source.close();
    expect((await source.read()).reason).toBe('NVML source closed');
    expect(addon.read).not.toHaveBeenCalled();
  });
});

describe('loadNvmlAddon', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'topod-addon-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lists every candidate with its cause and the fix', () => {
    const notAnAddon = path.join(dir, 'topod_nvml.node');
    writeFileSync(notAnAddon, 'not an ELF file');
    const missing = path.join(dir, 'missing/topod_nvml.node');
    let error: unknown;
    try {
      loadNvmlAddon([missing, notAnAddon]);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(NvmlAddonLoadError);
    const loadError = error as NvmlAddonLoadError;
    expect(loadError.code).toBe('TOPOD_ERR_NVML_ADDON_LOAD');
    expect(loadError.attempts).toHaveLength(2);
    expect(loadError.attempts[0]).toBe(`${missing}: not found`);
    expect(loadError.attempts[1]).toContain(notAnAddon);
    expect(loadError.message).toContain('npm run build:native');
  });
});
