/** An NVML activity read as the addon returns it, for tests: an idle H100 unless overridden. */
import type { GpuActivity } from '../../server/dynamic/activity-types.js';

export function gpuActivity(gpuUuid: string, overrides: Partial<GpuActivity> = {}): GpuActivity {
  return {
    gpuUuid,
    index: 0,
    readAt: '2026-01-01T00:00:00.000Z',
    processes: [],
    processListsRead: { compute: true, graphics: true },
    utilization: { source: 'nvml-samples', maxPercent: 0, meanPercent: 0, sampleCount: 12, spanMs: 1000, memoryPercent: 0 },
    memory: null,
    temperatureC: 61,
    powerWatts: 72,
    smClockMHz: 1980,
    maxSmClockMHz: 1980,
    clocksEventReasons: [],
    persistenceMode: true,
    eccModeCurrent: true,
    migEnabled: false,
    degraded: [],
    ...overrides,
  };
}
