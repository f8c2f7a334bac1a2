/** `nvidia-smi topo -m` from NVML state: direct NVLinks, NVSwitch fabrics, PCIe paths. */
import { describe, expect, it } from 'vitest';
import type { DynamicSnapshot, NvmlDevicePair, NvmlDeviceState } from '../../../server/dynamic/types.js';
import { gpuLinks } from '../../../server/fleet/links.js';
import { deviceState, firstDevice } from '../dynamic/scenario-device.js';

function gpu(index: number, bus: string, nvlinks: Array<[number, string, 'gpu' | 'switch' | null]> = []): NvmlDeviceState {
  return {
    ...deviceState(firstDevice('h100-80gb-mig-off.json'), {}, index),
    uuid: `GPU-${index}`,
    pciBusId: bus,
    nvlinks: nvlinks.map(([link, remote]) => ({ link, remotePciBusId: remote })),
    nvlinkRemoteTypes: nvlinks.map(([link, , type]) => ({ link, type })),
  };
}

function pair(
  a: number,
  b: number,
  commonAncestor: NvmlDevicePair['commonAncestor'],
  nvlink: NvmlDevicePair['p2p']['nvlink'],
): NvmlDevicePair {
  return { gpus: [`GPU-${a}`, `GPU-${b}`], commonAncestor, p2p: { read: 'ok', write: 'ok', nvlink, atomics: 'ok' }, degraded: [] };
}

const snapshot = (devices: NvmlDeviceState[], links?: NvmlDevicePair[]): DynamicSnapshot => ({
  available: true,
  reason: null,
  driverVersion: '580.95.05',
  cudaDriverVersion: 13000,
  devices,
  ...(links ? { links } : {}),
  readAt: new Date().toISOString(),
});

describe('gpuLinks', () => {
  it('counts direct NVLinks between two GPUs (bus ids compared case-insensitively)', () => {
    const a = gpu(0, '00000000:19:00.0', [
      [0, '00000000:3b:00.0', 'gpu'],
      [1, '00000000:3B:00.0', 'gpu'],
    ]);
    const b = gpu(1, '00000000:3B:00.0', [
      [0, '00000000:19:00.0', 'gpu'],
      [1, '00000000:19:00.0', 'gpu'],
    ]);
    const [link] = gpuLinks(snapshot([a, b], [pair(0, 1, 'node', 'ok')]));
    expect(link).toMatchObject({
      gpus: ['GPU-0', 'GPU-1'],
      topo: 'NV2',
      nvlink: { count: 2, via: 'direct' },
      pcie: { commonAncestor: 'node' },
    });
  });

  it('joins GPUs through an NVSwitch only when NVML says NVLink peer access works', () => {
    const sw = '00000000:5A:00.0';
    const a = gpu(0, '00000000:19:00.0', [
      [0, sw, 'switch'],
      [1, sw, 'switch'],
      [2, sw, 'switch'],
    ]);
    const b = gpu(1, '00000000:3B:00.0', [
      [0, sw, 'switch'],
      [1, sw, 'switch'],
    ]);
    expect(gpuLinks(snapshot([a, b], [pair(0, 1, 'system', 'ok')]))[0]).toMatchObject({ topo: 'NV2', nvlink: { count: 2, via: 'switch' } });
    // Another NVLink partition: the fabric is up on both sides, but they cannot reach each other over it.
    expect(gpuLinks(snapshot([a, b], [pair(0, 1, 'system', 'not-supported')]))[0]).toMatchObject({ topo: 'SYS', nvlink: null });
  });

  it('names the PCIe path as nvidia-smi does when there is no NVLink', () => {
    const devices = [gpu(0, '00000000:01:00.0'), gpu(1, '00000000:02:00.0'), gpu(2, '00000000:81:00.0')];
    const links = gpuLinks(
      snapshot(devices, [
        pair(0, 1, 'single', 'not-supported'),
        pair(0, 2, 'system', 'not-supported'),
        pair(1, 2, 'hostbridge', 'not-supported'),
      ]),
    );
    expect(links.map((l) => [l.indices, l.topo])).toEqual([
      [[0, 1], 'PIX'],
      [[0, 2], 'SYS'],
      [[1, 2], 'PHB'],
    ]);
  });

  it('lists pairs NVML gave no pair answer for, saying so, and nothing without NVML', () => {
    const links = gpuLinks(snapshot([gpu(0, '00000000:01:00.0'), gpu(1, '00000000:02:00.0')]));
    expect(links).toEqual([expect.objectContaining({ topo: null, nvlink: null, degraded: ['pair: NOT_READ'] })]);
    expect(gpuLinks({ ...snapshot([]), available: false, reason: 'no NVML' })).toEqual([]);
    expect(gpuLinks(null)).toEqual([]);
  });
});
