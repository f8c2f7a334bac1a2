/** RawActivity builders for the activity unit tests: an idle GPU unless told otherwise. */
import type { RawActivity, RawProcess } from '../../../server/dynamic/nvml-raw.js';

export const GPU_UUID = 'GPU-11111111-2222-3333-4444-555555555555';

export function rawProcess(pid: number, usedMemoryBytes: number | null, ids: { gi?: number; ci?: number } = {}): RawProcess {
  return { pid, usedMemoryBytes, gpuInstanceId: ids.gi ?? null, computeInstanceId: ids.ci ?? null };
}

export function rawActivity(overrides: Partial<RawActivity> = {}): RawActivity {
  return {
    index: 0,
    uuid: GPU_UUID,
    processes: { compute: [], graphics: [] },
    utilizationGpuPercent: 0,
    utilizationMemoryPercent: 0,
    utilizationSamples: [],
    memory: { totalBytes: 80 * 2 ** 30, usedBytes: 0, freeBytes: 80 * 2 ** 30 },
    temperatureC: 33,
    powerMilliwatts: 72_000,
    smClockMHz: 345,
    maxSmClockMHz: 1980,
    clocksEventReasons: 0x1,
    persistenceMode: true,
    eccModeCurrent: true,
    eccModePending: true,
    migModeCurrent: 0,
    migDevices: [],
    degraded: [],
    libraryPath: '/fake/libnvidia-ml.so.1',
    reinitCount: 0,
    readMicros: 250,
    ...overrides,
  };
}

/** Samples one period apart, oldest first, the last at `endMicros`. */
export function samples(percents: number[], periodMicros = 166_667, endMicros = 1_700_000_000_000_000): RawActivity['utilizationSamples'] {
  return percents.map((percent, i) => ({ timestampMicros: endMicros - (percents.length - 1 - i) * periodMicros, percent }));
}
