/**
 * Conditions records for the faces' tests, built by the scheduler's own
 * builder (conditionsFrom) from NVML reads shaped like the fake NVML's
 * tenant scenario (test/fixtures/nvml/h100-80gb-tenant.json): an H100 a
 * training job uses, and the same H100 idle.
 */
import type { GpuActivity, GpuProcess } from '../../../server/dynamic/activity-types.js';
import { conditionsFrom, type Look } from '../../../server/jobs/gpu-watch.js';
import type { ProbeConditions } from '../../../server/model/conditions-schema.js';
import type { ResultDocument } from '../../../server/model/document.js';
import { gpuActivity } from '../../helpers/gpu-activity.js';

const TENANT: GpuProcess = { pid: 48213, kind: 'compute', usedMemoryBytes: 2415919104, migDeviceUuid: null };

const activity = gpuActivity;

/** Measured anyway (evenIfBusy) while a training job ran: clocks held back by the power cap, warming up. */
export function busyConditions(gpuUuid: string): ProbeConditions {
  const busy = (overrides: Partial<GpuActivity>): Look => {
    const read = activity(gpuUuid, {
      processes: [TENANT],
      utilization: { source: 'nvml-samples', maxPercent: 100, meanPercent: 100, sampleCount: 12, spanMs: 1000, memoryPercent: 87 },
      clocksEventReasons: ['sw-power-cap'],
      powerWatts: 612,
      ...overrides,
    });
    return { busy: true, reason: 'gpu-busy: 1 compute process (2.25 GiB), 100 % utilization', activity: read, tenants: [TENANT] };
  };
  return conditionsFrom([busy({ smClockMHz: 1755, temperatureC: 61 }), busy({ smClockMHz: 1980, temperatureC: 63 })], true);
}

/** An idle H100: nobody else there, full clocks. */
export function idleConditions(gpuUuid: string): ProbeConditions {
  const idle = (overrides: Partial<GpuActivity>): Look => ({
    busy: false,
    reason: 'idle',
    activity: activity(gpuUuid, overrides),
    tenants: [],
  });
  return conditionsFrom([idle({ smClockMHz: 1755, clocksEventReasons: ['gpu-idle'] }), idle({ temperatureC: 63 })], false);
}

/** No NVML: nothing could be looked at. */
export function unknownConditions(): ProbeConditions {
  return conditionsFrom([{ busy: false, reason: 'activity unknown: NVML is not loaded', activity: null, tenants: [] }], false);
}

export function withConditions(result: ResultDocument, conditions: ProbeConditions): ResultDocument {
  return { ...result, conditions };
}
