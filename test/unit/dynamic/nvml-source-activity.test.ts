import { describe, expect, it, vi } from 'vitest';
import type { NvmlAddon, RawActivity } from '../../../server/dynamic/nvml-raw.js';
import { NvmlSource, POLLED_ACTIVITY_READS } from '../../../server/dynamic/nvml-source.js';
import { GPU_UUID, rawActivity, rawProcess, samples } from './activity-raw.js';

function stubAddon(readActivity: NvmlAddon['readActivity']): NvmlAddon {
  return {
    read: vi.fn(async () => ({
      libraryPath: '/fake',
      driverVersion: null,
      cudaDriverVersion: null,
      deviceCount: 0,
      devices: [],
      degraded: [],
      reinitCount: 0,
      readMicros: 1,
    })),
    readActivity,
    open: vi.fn(async () => undefined),
    close: vi.fn(async () => undefined),
    status: vi.fn(() => ({ loaded: true, references: 1, reinitCount: 0 })),
  };
}

function scripted(reads: RawActivity[]) {
  let call = 0;
  return vi.fn(async () => structuredClone(reads[Math.min(call++, reads.length - 1)] as RawActivity));
}

describe('NvmlSource.readActivity', () => {
  it('reads once when the driver keeps utilization samples, and asks by UUID', async () => {
    const readActivity = scripted([
      rawActivity({ utilizationSamples: samples([0, 0, 100, 100]), processes: { compute: [rawProcess(4242, 2 ** 31)], graphics: [] } }),
    ]);
    const addon = stubAddon(readActivity);
    const source = new NvmlSource({ addon, libraryPath: '/fake/libnvidia-ml.so.1' });
    const { activity, reason } = await source.readActivity(GPU_UUID, { windowMs: 1000 });
    expect(reason).toBeNull();
    expect(readActivity).toHaveBeenCalledTimes(1);
    expect(readActivity).toHaveBeenCalledWith({ uuid: GPU_UUID, libraryPath: '/fake/libnvidia-ml.so.1' });
    expect(activity?.utilization).toMatchObject({ source: 'nvml-samples', maxPercent: 100, sampleCount: 4 });
    expect(activity?.processes).toEqual([{ pid: 4242, kind: 'compute', usedMemoryBytes: 2 ** 31, migDeviceUuid: null }]);
    expect(addon.open).toHaveBeenCalledTimes(1);
  });

  it('polls over the window when the driver keeps no samples, keeping every tenant it saw', async () => {
    const tenant = { compute: [rawProcess(5000, 2 ** 30)], graphics: [] };
    const readActivity = scripted([
      rawActivity({ utilizationSamples: null, utilizationGpuPercent: 0 }),
      rawActivity({ utilizationSamples: null, utilizationGpuPercent: 80, processes: tenant }),
      rawActivity({ utilizationSamples: null, utilizationGpuPercent: 0 }),
    ]);
    const { activity } = await new NvmlSource({ addon: stubAddon(readActivity) }).readActivity(GPU_UUID, { windowMs: 20 });
    expect(readActivity).toHaveBeenCalledTimes(POLLED_ACTIVITY_READS);
    expect(activity?.utilization).toMatchObject({ source: 'polled', maxPercent: 80, sampleCount: POLLED_ACTIVITY_READS });
    expect(activity?.processes.map((p) => p.pid)).toEqual([5000]);
  });

  it('reads once when there is nothing to poll (MIG on) or no window', async () => {
    const mig = scripted([rawActivity({ utilizationSamples: null, utilizationGpuPercent: null, migModeCurrent: 1 })]);
    expect((await new NvmlSource({ addon: stubAddon(mig) }).readActivity(GPU_UUID)).activity?.utilization).toBeNull();
    expect(mig).toHaveBeenCalledTimes(1);
    const instant = scripted([rawActivity({ utilizationSamples: null, utilizationGpuPercent: 42 })]);
    const { activity } = await new NvmlSource({ addon: stubAddon(instant) }).readActivity(GPU_UUID, { windowMs: 0 });
    expect(activity?.utilization).toMatchObject({ source: 'polled', maxPercent: 42, sampleCount: 1, spanMs: 0 });
    expect(instant).toHaveBeenCalledTimes(1);
  });

  it('answers with the reason when the addon cannot read, instead of throwing', async () => {
    const notFound = vi.fn(async () => {
      throw Object.assign(new Error('no GPU with UUID GPU-x (NVML lists 1)'), { code: 'TOPOD_NVML_GPU_NOT_FOUND', stage: 'read' });
    });
    expect(await new NvmlSource({ addon: stubAddon(notFound) }).readActivity('GPU-x')).toEqual({
      activity: null,
      reason: 'TOPOD_NVML_GPU_NOT_FOUND: no GPU with UUID GPU-x (NVML lists 1)',
    });
    const old = await new NvmlSource({ addon: stubAddon(undefined) }).readActivity(GPU_UUID);
    expect(old.reason).toContain('npm run build:native');
    const closed = new NvmlSource({ addon: stubAddon(notFound) });
    await closed.close();
    expect(await closed.readActivity(GPU_UUID)).toEqual({ activity: null, reason: 'NVML source closed' });
  });

  it('opens one NVML session for reads that start together', async () => {
    const addon = stubAddon(scripted([rawActivity({ utilizationSamples: samples([0]) })]));
    const source = new NvmlSource({ addon });
    await Promise.all([source.read(), source.readActivity(GPU_UUID), source.readActivity(GPU_UUID)]);
    expect(addon.open).toHaveBeenCalledTimes(1);
  });

  it('refuses a window that is not one', async () => {
    const source = new NvmlSource({ addon: stubAddon(scripted([rawActivity()])) });
    await expect(source.readActivity(GPU_UUID, { windowMs: -5 })).rejects.toThrow(RangeError);
    await expect(source.readActivity(GPU_UUID, { windowMs: Number.NaN })).rejects.toThrow(/windowMs/);
  });
});
