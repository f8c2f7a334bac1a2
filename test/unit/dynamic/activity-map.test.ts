import { describe, expect, it } from 'vitest';
import {
  decodeClocksEventReasons,
  mergeProcesses,
  mergeReads,
  toGpuActivity,
  utilizationFromReads,
  utilizationFromSamples,
} from '../../../server/dynamic/activity-map.js';
import { CLOCKS_EVENT_REASON_BITS } from '../../../server/dynamic/activity-types.js';
import { GPU_UUID, rawActivity, rawProcess, samples } from './activity-raw.js';

const MIG_A = 'MIG-aaaaaaaa-0000-5000-8000-000000000001';
const MIG_B = 'MIG-bbbbbbbb-0000-5000-8000-000000000002';
const context = { gpuUuid: GPU_UUID, utilization: null, readAt: new Date('2025-01-01T00:00:00Z') };

describe('decodeClocksEventReasons', () => {
  it('names each bit nvml.h defines, lowest first', () => {
    const all = Object.values(CLOCKS_EVENT_REASON_BITS).reduce((mask, bit) => mask | bit, 0);
    expect(decodeClocksEventReasons(all)).toEqual([
      'gpu-idle',
      'applications-clocks-setting',
      'sw-power-cap',
      'hw-slowdown',
      'sync-boost',
      'sw-thermal-slowdown',
      'hw-thermal-slowdown',
      'hw-power-brake-slowdown',
      'display-clock-setting',
    ]);
    expect(decodeClocksEventReasons(0)).toEqual([]);
    expect(decodeClocksEventReasons(0x4 | 0x40)).toEqual(['sw-power-cap', 'hw-thermal-slowdown']);
  });

  it('keeps bits newer than the table, beyond 32 bits too', () => {
    expect(decodeClocksEventReasons(0x200 + 2 ** 40 + 0x1)).toEqual(['gpu-idle', 'bit-9', 'bit-40']);
  });

  it('refuses a mask that is not a non-negative integer', () => {
    expect(() => decodeClocksEventReasons(-1)).toThrow(RangeError);
    expect(() => decodeClocksEventReasons(1.5)).toThrow(/non-negative integer/);
  });
});

describe('mergeProcesses', () => {
  it('lists each (pid, kind) once, the MIG device entry winning over the GPU-wide copy', () => {
    const raw = rawActivity({
      migModeCurrent: 1,
      processes: {
        compute: [rawProcess(10, 4 * 2 ** 30), rawProcess(20, 2 ** 30, { gi: 1, ci: 0 })],
        graphics: [rawProcess(20, 2 ** 30, { gi: 1, ci: 0 })],
      },
      migDevices: [
        {
          index: 0,
          uuid: MIG_A,
          processes: { compute: [rawProcess(20, 2 ** 30, { gi: 1, ci: 0 })], graphics: [rawProcess(20, 2 ** 30, { gi: 1, ci: 0 })] },
          degraded: [],
        },
        { index: 1, uuid: MIG_B, processes: { compute: [rawProcess(30, null)], graphics: [] }, degraded: [] },
      ],
    });
    expect(mergeProcesses(raw)).toEqual([
      { pid: 10, kind: 'compute', usedMemoryBytes: 4 * 2 ** 30, migDeviceUuid: null },
      { pid: 20, kind: 'compute', usedMemoryBytes: 2 ** 30, migDeviceUuid: MIG_A },
      { pid: 20, kind: 'graphics', usedMemoryBytes: 2 ** 30, migDeviceUuid: MIG_A },
      { pid: 30, kind: 'compute', usedMemoryBytes: null, migDeviceUuid: MIG_B },
    ]);
  });
});

describe('utilization', () => {
  it('judges the driver samples within the window of the newest one', () => {
    const raw = rawActivity({ utilizationSamples: samples([100, 100, 0, 0, 30, 60], 500_000), utilizationMemoryPercent: 12 });
    expect(utilizationFromSamples(raw, 1000)).toEqual({
      source: 'nvml-samples',
      maxPercent: 60,
      meanPercent: 30,
      sampleCount: 3,
      spanMs: 1000,
      memoryPercent: 12,
    });
    expect(utilizationFromSamples(raw, 0)).toMatchObject({ maxPercent: 60, sampleCount: 1, spanMs: 0 });
    expect(utilizationFromSamples(raw, 60_000)).toMatchObject({ maxPercent: 100, sampleCount: 6, spanMs: 2500 });
  });

  it('lets the instantaneous figure raise the maximum: the buffer may lag a tenant that just started', () => {
    const raw = rawActivity({ utilizationSamples: samples([0, 0, 0]), utilizationGpuPercent: 97 });
    expect(utilizationFromSamples(raw, 1000)).toMatchObject({ maxPercent: 97, meanPercent: 0, sampleCount: 3 });
  });

  it('has no sampled utilization when the driver keeps none or refuses them', () => {
    expect(utilizationFromSamples(rawActivity({ utilizationSamples: [] }), 1000)).toBeNull();
    expect(utilizationFromSamples(rawActivity({ utilizationSamples: null }), 1000)).toBeNull();
  });

  it('takes max and mean of polled reads, skipping reads without a figure', () => {
    const reads = [10, null, 90, 20].map((p) =>
      rawActivity({ utilizationGpuPercent: p, utilizationMemoryPercent: p === null ? null : p / 2 }),
    );
    expect(utilizationFromReads(reads, 300)).toEqual({
      source: 'polled',
      maxPercent: 90,
      meanPercent: 40,
      sampleCount: 3,
      spanMs: 300,
      memoryPercent: 10,
    });
    expect(utilizationFromReads([rawActivity({ utilizationGpuPercent: null })], 0)).toBeNull();
  });
});

describe('toGpuActivity', () => {
  it("converts units and names, and prefixes MIG devices' refusals", () => {
    const raw = rawActivity({
      uuid: null,
      powerMilliwatts: 312_500,
      clocksEventReasons: 0x4,
      migModeCurrent: 1,
      processes: { compute: null, graphics: [] },
      migDevices: [{ index: 2, uuid: MIG_A, processes: { compute: [], graphics: null }, degraded: ['processes.graphics: NO_PERMISSION'] }],
      degraded: ['processes.compute: NO_PERMISSION', 'utilization: NOT_SUPPORTED'],
    });
    expect(toGpuActivity(raw, context)).toMatchObject({
      gpuUuid: GPU_UUID,
      readAt: '2025-01-01T00:00:00.000Z',
      powerWatts: 312.5,
      clocksEventReasons: ['sw-power-cap'],
      migEnabled: true,
      processListsRead: { compute: true, graphics: true },
      degraded: ['processes.compute: NO_PERMISSION', 'utilization: NOT_SUPPORTED', 'mig[2] processes.graphics: NO_PERMISSION'],
    });
  });

  it('keeps refused fields null and says when no process list could be read', () => {
    const raw = rawActivity({
      processes: { compute: null, graphics: null },
      memory: null,
      temperatureC: null,
      powerMilliwatts: null,
      smClockMHz: null,
      maxSmClockMHz: null,
      clocksEventReasons: null,
      persistenceMode: null,
      eccModeCurrent: null,
      migModeCurrent: null,
    });
    expect(toGpuActivity(raw, context)).toMatchObject({
      processes: [],
      processListsRead: { compute: false, graphics: false },
      memory: null,
      temperatureC: null,
      powerWatts: null,
      smClockMHz: null,
      maxSmClockMHz: null,
      clocksEventReasons: null,
      persistenceMode: null,
      eccModeCurrent: null,
      migEnabled: null,
    });
  });
});

describe('mergeReads', () => {
  it('keeps every process and event reason seen over the window, the rest from the last read', () => {
    const reads = [
      rawActivity({ processes: { compute: [rawProcess(7, 2 ** 29)], graphics: [] }, clocksEventReasons: 0x1, temperatureC: 40 }),
      rawActivity({ processes: { compute: [rawProcess(7, 2 ** 31), rawProcess(8, null)], graphics: [] }, clocksEventReasons: 0x200 + 0x4 }),
      rawActivity({
        processes: { compute: null, graphics: [] },
        clocksEventReasons: 0x0,
        temperatureC: 55,
        degraded: ['processes.compute: TIMEOUT'],
      }),
    ];
    const merged = mergeReads(reads, { ...context, utilization: utilizationFromReads(reads, 200) });
    expect(merged.processes).toEqual([
      { pid: 7, kind: 'compute', usedMemoryBytes: 2 ** 31, migDeviceUuid: null },
      { pid: 8, kind: 'compute', usedMemoryBytes: null, migDeviceUuid: null },
    ]);
    expect(merged.clocksEventReasons).toEqual(['gpu-idle', 'sw-power-cap', 'bit-9']);
    expect(merged.temperatureC).toBe(55);
    expect(merged.processListsRead.compute).toBe(true);
    expect(merged.degraded).toEqual(['processes.compute: TIMEOUT']);
    expect(merged.utilization).toMatchObject({ source: 'polled', sampleCount: 3 });
  });

  it('needs a read', () => {
    expect(() => mergeReads([], context)).toThrow(RangeError);
  });
});
