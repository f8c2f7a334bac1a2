/**
 * Looking at a GPU before and while it is measured (issue 17, DESIGN.md
 * "trust on a shared node"): NVML says who else uses it; a busy GPU's probe
 * waits, a tenant that arrives mid-probe stops it, and every result records
 * the conditions it was measured under.
 */
import type { GpuActivity, GpuActivityReading, GpuProcess } from '../dynamic/activity-types.js';
import { DEFAULT_BUSY_THRESHOLDS, busyVerdict, tenantsOf, type BusyThresholds } from '../dynamic/tenants.js';
import type { ProbeConditions, SeenProcess } from '../model/conditions-schema.js';
import type { ProbeWhen } from '../model/job.js';

export type ReadActivity = (gpuUuid: string, options?: { windowMs?: number }) => Promise<GpuActivityReading>;

export interface GpuWatchOptions {
  readActivity: ReadActivity;
  when: ProbeWhen;
  /** A job that found its GPU busy fails after waiting this long. */
  maxWaitMs: number;
  /** Re-checks a busy GPU after this long, doubling up to `maxRetryMs`. */
  firstRetryMs: number;
  maxRetryMs: number;
  /** NVML is read this often while a probe runs. */
  watchIntervalMs: number;
  /** Utilization is averaged over this window before a probe. */
  windowMs: number;
  /** PIDs of topod and its probes as this process sees them. */
  ownPids: () => number[];
  thresholds?: BusyThresholds;
}

export interface Look {
  busy: boolean;
  reason: string;
  /** null when NVML could not say (no NVML, an unknown GPU): nothing is known, and the probe goes ahead. */
  activity: GpuActivity | null;
  /** The foreign processes seen. */
  tenants: GpuProcess[];
}

/** One look: who else uses the GPU. `probesOnGpu`: how many of our probes hold a context there now (0 before a probe). */
export async function lookAtGpu(
  options: Pick<GpuWatchOptions, 'readActivity' | 'ownPids' | 'thresholds'>,
  gpuUuid: string,
  probesOnGpu: number,
  windowMs: number,
): Promise<Look> {
  const reading = await options.readActivity(gpuUuid, { windowMs });
  if (!reading.activity) return { busy: false, reason: `activity unknown: ${reading.reason}`, activity: null, tenants: [] };
  const tenants = tenantsOf(reading.activity, { pids: options.ownPids(), probesOnGpu });
  const verdict = busyVerdict(reading.activity, tenants, options.thresholds ?? DEFAULT_BUSY_THRESHOLDS);
  return { busy: verdict.busy, reason: verdict.reason, activity: reading.activity, tenants: tenants.processes };
}

/** The delay before a busy GPU is looked at again: doubling from the first, at most the cap. */
export function retryDelayMs(attempt: number, firstMs: number, maxMs: number): number {
  return Math.min(maxMs, firstMs * 2 ** Math.max(0, attempt));
}

/**
 * NVML reads during one probe: the clocks, their event reasons, temperature
 * and power, and any process that is not ours. `onTenant` is told the first
 * time another process shows up (the probe is then interfered with).
 */
export class ProbeWatch {
  private readonly looks: Look[] = [];
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  private tenantReported = false;

  constructor(
    private readonly options: GpuWatchOptions,
    private readonly gpuUuid: string,
    private readonly probesOnGpu: number,
    private readonly onTenant: (look: Look) => void,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Starts watching; `first` is the look taken before the probe (kept as the start of the record). */
  start(first: Look): void {
    this.looks.push(first);
    this.timer = setInterval(() => this.sample(), this.options.watchIntervalMs);
    this.timer.unref();
  }

  /** Stops, takes one last look, and returns what was seen. */
  async stop(): Promise<Look[]> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.reading;
    await this.readOnce();
    return this.looks;
  }

  private sample(): void {
    if (this.reading) return;
    this.reading = this.readOnce().finally(() => {
      this.reading = null;
    });
  }

  private async readOnce(): Promise<void> {
    try {
      const look = await lookAtGpu(this.options, this.gpuUuid, this.probesOnGpu, 0);
      if (!look.activity) return;
      this.looks.push(look);
      if (look.tenants.length > 0 && !this.tenantReported) {
        this.tenantReported = true;
        this.onTenant(look);
      }
    } catch (error) {
      this.onError(error);
    }
  }
}

const MAX_RECORDED_PROCESSES = 32;

/** The record of one probe's conditions, from the looks before and during it. */
export function conditionsFrom(looks: readonly Look[], probedWhileBusy: boolean): ProbeConditions {
  const first = looks[0];
  const read = looks.filter((look): look is Look & { activity: GpuActivity } => look.activity !== null);
  const start = read[0]?.activity ?? null;
  const end = read.at(-1)?.activity ?? null;
  const clocks = read.map((look) => look.activity.smClockMHz).filter((mhz): mhz is number => mhz !== null);
  const processes = new Map<string, SeenProcess>();
  for (const look of read) {
    for (const p of look.tenants) {
      const key = `${p.pid}/${p.kind}/${p.migDeviceUuid ?? ''}`;
      const seen = processes.get(key);
      const usedMemoryBytes =
        p.usedMemoryBytes === null ? (seen?.usedMemoryBytes ?? null) : Math.max(p.usedMemoryBytes, seen?.usedMemoryBytes ?? 0);
      processes.set(key, { pid: p.pid, kind: p.kind, usedMemoryBytes, migDeviceUuid: p.migDeviceUuid });
    }
  }
  const reasons = new Set(read.flatMap((look) => look.activity.clocksEventReasons ?? []));
  const busyAtStart = first?.busy ?? false;
  return {
    source: start ? 'nvml' : 'none',
    note: start ? null : (first?.reason ?? 'not looked at'),
    busyAtStart,
    // Allowed to measure a busy GPU: busy when it started, or someone came during it.
    probedWhileBusy: probedWhileBusy && (busyAtStart || processes.size > 0),
    busyReason: first && first.activity ? first.reason : null,
    otherProcesses: [...processes.values()].slice(0, MAX_RECORDED_PROCESSES),
    smClockMHz: clocks.length > 0 ? { min: Math.min(...clocks), max: Math.max(...clocks) } : null,
    maxSmClockMHz: start?.maxSmClockMHz ?? null,
    // The GPU idles between benchmark launches: that reason says nothing about the measurement.
    clocksEventReasons: [...reasons].filter((reason) => reason !== 'gpu-idle').sort(),
    temperatureC: { start: start?.temperatureC ?? null, end: end?.temperatureC ?? null },
    powerWatts: { start: start?.powerWatts ?? null, end: end?.powerWatts ?? null },
    persistenceMode: start?.persistenceMode ?? null,
    eccMode: start?.eccModeCurrent ?? null,
    samples: read.length,
  };
}
