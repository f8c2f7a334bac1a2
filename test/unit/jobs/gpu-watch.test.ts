/** The pure parts of looking at a GPU: the retry schedule and the conditions record built from the looks. */
import { describe, expect, it } from 'vitest';
import type { GpuActivity, GpuProcess } from '../../../server/dynamic/activity-types.js';
import { conditionsFrom, retryDelayMs, type Look } from '../../../server/jobs/gpu-watch.js';
import { gpuActivity } from '../../helpers/gpu-activity.js';

const activity = (overrides: Partial<GpuActivity> = {}): GpuActivity =>
  gpuActivity('GPU-1', { temperatureC: 40, powerWatts: 100, utilization: null, ...overrides });

const tenant: GpuProcess = { pid: 9, kind: 'compute', usedMemoryBytes: 2 ** 30, migDeviceUuid: null };
const look = (over: Partial<Look> & { activity?: GpuActivity | null } = {}): Look => ({
  busy: false,
  reason: 'idle: no other process, 0 % utilization',
  activity: activity(),
  tenants: [],
  ...over,
});

describe('retryDelayMs', () => {
  it('doubles from the first delay up to the cap', () => {
    expect([0, 1, 2, 3, 4, 5].map((attempt) => retryDelayMs(attempt, 5_000, 60_000))).toEqual([
      5_000, 10_000, 20_000, 40_000, 60_000, 60_000,
    ]);
  });
});

describe('conditionsFrom', () => {
  it('records clocks, their reasons (not gpu-idle), temperature and power at start and end', () => {
    const looks = [
      look({ activity: activity({ smClockMHz: 345, clocksEventReasons: ['gpu-idle'], temperatureC: 38, powerWatts: 70 }) }),
      look({ activity: activity({ smClockMHz: 1755, clocksEventReasons: ['sw-power-cap'], temperatureC: 52, powerWatts: 400 }) }),
    ];
    expect(conditionsFrom(looks, false)).toMatchObject({
      source: 'nvml',
      busyAtStart: false,
      probedWhileBusy: false,
      smClockMHz: { min: 345, max: 1755 },
      clocksEventReasons: ['sw-power-cap'],
      temperatureC: { start: 38, end: 52 },
      powerWatts: { start: 70, end: 400 },
      samples: 2,
    });
  });

  it('says a result was measured on a busy GPU when allowed and the tenant came only mid-probe', () => {
    const looks = [look(), look({ busy: true, reason: 'gpu-busy: 1 compute process (1.0 GiB)', tenants: [tenant] })];
    expect(conditionsFrom(looks, true)).toMatchObject({
      busyAtStart: false,
      probedWhileBusy: true,
      otherProcesses: [{ pid: 9, kind: 'compute', usedMemoryBytes: 2 ** 30, migDeviceUuid: null }],
    });
    expect(conditionsFrom([look()], true).probedWhileBusy).toBe(false);
  });

  it('says why nothing is known when NVML could not be read', () => {
    expect(conditionsFrom([look({ activity: null, reason: 'activity unknown: NVML is not loaded' })], false)).toMatchObject({
      source: 'none',
      note: 'activity unknown: NVML is not loaded',
      busyReason: null,
      smClockMHz: null,
      samples: 0,
    });
  });
});
