import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadNvmlAddon } from '../../../server/dynamic/nvml-addon.js';
import { NvmlSource } from '../../../server/dynamic/nvml-source.js';
import { assertNativeBuilt, fakeSource, ScenarioFile } from './fake-nvml.js';

let scenario: ScenarioFile | null = null;
const sources: NvmlSource[] = [];

function track(source: NvmlSource): NvmlSource {
  sources.push(source);
  return source;
}

beforeAll(assertNativeBuilt);
afterEach(async () => {
  for (const source of sources.splice(0)) await source.close();
  scenario?.remove();
  scenario = null;
  delete process.env.TOPOD_FAKE_NVML_SCENARIO;
  // Every session closed: the next test starts from an unloaded library.
  expect(loadNvmlAddon().status()).toMatchObject({ loaded: false, references: 0 });
});

describe('addon + fake NVML: failures', () => {
  it('reports a missing libnvidia-ml as unavailable, with the path and the dlopen reason', async () => {
    const missing = path.join('/nonexistent', 'libnvidia-ml.so.1');
    const snapshot = await track(new NvmlSource({ libraryPath: missing })).read();
    expect(snapshot.available).toBe(false);
    expect(snapshot.devices).toEqual([]);
    expect(snapshot.reason).toMatch(/^TOPOD_NVML_LIBRARY_NOT_FOUND: cannot load \/nonexistent\/libnvidia-ml\.so\.1: .*No such file/);
  });

  it('reports a machine without a driver (no scenario) as DRIVER_NOT_LOADED', async () => {
    delete process.env.TOPOD_FAKE_NVML_SCENARIO;
    const snapshot = await track(fakeSource()).read();
    expect(snapshot).toMatchObject({
      available: false,
      reason: 'NVML_ERROR_DRIVER_NOT_LOADED: nvmlInit failed: NVML_ERROR_DRIVER_NOT_LOADED',
    });
  });

  it('reports an init failure, then recovers once the driver answers', async () => {
    scenario = new ScenarioFile('h100-80gb-mig-off.json');
    scenario.edit((s) => {
      s.failures.init = 'NVML_ERROR_NO_PERMISSION';
    });
    const source = track(fakeSource());
    const down = await source.read();
    expect(down.available).toBe(false);
    expect(down.reason).toContain('NVML_ERROR_NO_PERMISSION');
    scenario.edit((s) => {
      s.failures.init = null;
    });
    const up = await source.read();
    expect(up.available).toBe(true);
    expect(up.devices).toHaveLength(1);
  });

  it('re-initialises after LIB_RM_VERSION_MISMATCH at init', async () => {
    scenario = new ScenarioFile('a100-40gb-mig-mixed.json');
    scenario.edit((s) => {
      s.failures.rmVersionMismatch = 2;
    });
    const source = track(fakeSource());
    const snapshot = await source.read();
    expect(snapshot.available).toBe(true);
    expect(snapshot.devices[0]?.mig.instances).toHaveLength(3);
    expect(source.lastRead?.reinitCount).toBeGreaterThanOrEqual(2);
  });

  it('re-initialises when the driver changes under an open session', async () => {
    scenario = new ScenarioFile('a100-40gb-mig-mixed.json');
    const source = track(fakeSource());
    expect((await source.read()).available).toBe(true);
    const reinitsBefore = source.lastRead?.reinitCount ?? 0;
    scenario.edit((s) => {
      s.driverVersion = '580.105.08';
      s.failures.rmVersionMismatch = 1;
    });
    const after = await source.read();
    expect(after).toMatchObject({ available: true, driverVersion: '580.105.08' });
    expect(source.lastRead?.reinitCount).toBe(reinitsBefore + 1);
  });

  it('gives up on a mismatch that persists, then recovers when it clears', async () => {
    scenario = new ScenarioFile('a100-40gb-mig-mixed.json');
    scenario.edit((s) => {
      s.failures.rmVersionMismatch = 50;
    });
    const source = track(fakeSource());
    const down = await source.read();
    expect(down.available).toBe(false);
    expect(down.reason).toContain('NVML_ERROR_LIB_RM_VERSION_MISMATCH');
    scenario.edit((s) => {
      s.failures.rmVersionMismatch = 0;
    });
    expect((await source.read()).available).toBe(true);
  });

  it('refuses a second libnvidia-ml while sessions on the first are open', async () => {
    scenario = new ScenarioFile('h100-80gb-mig-off.json');
    expect((await track(fakeSource()).read()).available).toBe(true);
    const other = await track(new NvmlSource({ libraryPath: '/elsewhere/libnvidia-ml.so.1' })).read();
    expect(other.available).toBe(false);
    expect(other.reason).toMatch(/^TOPOD_NVML_LIBRARY_CONFLICT: NVML is already open from .*fake-nvml/);
  });

  it('reports a scenario the fake cannot parse as an unknown NVML error', async () => {
    scenario = new ScenarioFile('a100-40gb-mig-mixed.json');
    scenario.edit((s) => {
      s.devices[0].gpuInstances[0].profileId = 12345;
    });
    const snapshot = await track(fakeSource()).read();
    expect(snapshot).toMatchObject({ available: false });
    expect(snapshot.reason).toContain('NVML_ERROR_UNKNOWN');
  });
});
