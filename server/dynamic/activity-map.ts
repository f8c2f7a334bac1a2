/**
 * Raw addon activity → GpuActivity. Pure: event-reason bits named, process
 * lists of the GPU and of its MIG devices merged into one list, utilization
 * judged over a window (the driver's samples, or several polled reads).
 */
import type { RawActivity, RawMigActivity, RawProcess } from './nvml-raw.js';
import {
  CLOCKS_EVENT_REASON_BITS,
  type ClocksEventReason,
  type GpuActivity,
  type GpuProcess,
  type GpuProcessKind,
  type GpuUtilization,
} from './activity-types.js';

const REASON_BY_BIT = new Map<number, ClocksEventReason>(
  Object.entries(CLOCKS_EVENT_REASON_BITS).map(([name, bit]) => [bit, name as ClocksEventReason]),
);

/** Names of the set bits, lowest first; a bit newer than nvml.h's table reads `bit-<n>`. */
export function decodeClocksEventReasons(mask: number): ClocksEventReason[] {
  if (!Number.isInteger(mask) || mask < 0) throw new RangeError(`a clocks event reason mask is a non-negative integer, not ${mask}`);
  const reasons: ClocksEventReason[] = [];
  // Division, not bit operators: JavaScript's operate on 32 bits and the mask has 64.
  let rest = mask;
  for (let bit = 0; rest > 0; bit++, rest = Math.floor(rest / 2)) {
    if (rest % 2 === 1) reasons.push(REASON_BY_BIT.get(2 ** bit) ?? `bit-${bit}`);
  }
  return reasons;
}

const KINDS: GpuProcessKind[] = ['compute', 'graphics'];

function entries(list: RawProcess[] | null, kind: GpuProcessKind, migDeviceUuid: string | null): GpuProcess[] {
  return (list ?? []).map((p) => ({ pid: p.pid, kind, usedMemoryBytes: p.usedMemoryBytes, migDeviceUuid }));
}

/**
 * One entry per (pid, kind). With MIG on, a privileged reader sees every
 * instance's processes on the GPU's own list too: the MIG device's entry,
 * which names where the process runs, wins over that copy.
 */
export function mergeProcesses(raw: RawActivity): GpuProcess[] {
  const byKey = new Map<string, GpuProcess>();
  const add = (process: GpuProcess) => {
    const key = `${process.pid}/${process.kind}`;
    if (!byKey.has(key)) byKey.set(key, process);
  };
  for (const mig of raw.migDevices) {
    for (const kind of KINDS) entries(mig.processes[kind], kind, mig.uuid).forEach(add);
  }
  for (const kind of KINDS) entries(raw.processes[kind], kind, null).forEach(add);
  return [...byKey.values()].sort((a, b) => a.pid - b.pid || a.kind.localeCompare(b.kind));
}

function listRead(raw: RawActivity, kind: GpuProcessKind): boolean {
  return raw.processes[kind] !== null || raw.migDevices.some((mig: RawMigActivity) => mig.processes[kind] !== null);
}

function maxAndMean(percents: number[]): { maxPercent: number; meanPercent: number } {
  return { maxPercent: Math.max(...percents), meanPercent: percents.reduce((sum, p) => sum + p, 0) / percents.length };
}

/**
 * The driver's samples within `windowMs` of the newest one; null when it
 * keeps none. Measured against the newest sample, not our clock: nothing
 * promises that the driver's time stamps and Date.now() share an epoch. The
 * instantaneous figure read with them joins the maximum, so a buffer that
 * stopped filling cannot hide a tenant that started since.
 */
export function utilizationFromSamples(raw: RawActivity, windowMs: number): GpuUtilization | null {
  const samples = raw.utilizationSamples;
  const newest = samples?.at(-1);
  if (!samples || !newest) return null;
  const window = samples.filter((s) => s.timestampMicros >= newest.timestampMicros - windowMs * 1000);
  const first = window[0] ?? newest;
  const { maxPercent, meanPercent } = maxAndMean(window.map((s) => s.percent));
  return {
    source: 'nvml-samples',
    maxPercent: Math.max(maxPercent, raw.utilizationGpuPercent ?? 0),
    meanPercent,
    sampleCount: window.length,
    spanMs: (newest.timestampMicros - first.timestampMicros) / 1000,
    memoryPercent: raw.utilizationMemoryPercent,
  };
}

/** Utilization from instantaneous reads taken `spanMs` apart in all; null when none had it. */
export function utilizationFromReads(reads: RawActivity[], spanMs: number): GpuUtilization | null {
  const percents = reads.map((r) => r.utilizationGpuPercent).filter((p): p is number => p !== null);
  if (percents.length === 0) return null;
  const memory = reads.map((r) => r.utilizationMemoryPercent).filter((p): p is number => p !== null);
  return { source: 'polled', ...maxAndMean(percents), sampleCount: percents.length, spanMs, memoryPercent: memory.at(-1) ?? null };
}

function degradedOf(raw: RawActivity): string[] {
  return [...raw.degraded, ...raw.migDevices.flatMap((mig) => mig.degraded.map((entry) => `mig[${mig.index}] ${entry}`))];
}

export interface ActivityContext {
  /** The UUID asked for: the read's own when NVML could not give it. */
  gpuUuid: string;
  utilization: GpuUtilization | null;
  readAt: Date;
}

export function toGpuActivity(raw: RawActivity, context: ActivityContext): GpuActivity {
  return {
    gpuUuid: raw.uuid ?? context.gpuUuid,
    index: raw.index,
    readAt: context.readAt.toISOString(),
    processes: mergeProcesses(raw),
    processListsRead: { compute: listRead(raw, 'compute'), graphics: listRead(raw, 'graphics') },
    utilization: context.utilization,
    memory: raw.memory ? { ...raw.memory } : null,
    temperatureC: raw.temperatureC,
    powerWatts: raw.powerMilliwatts === null ? null : raw.powerMilliwatts / 1000,
    smClockMHz: raw.smClockMHz,
    maxSmClockMHz: raw.maxSmClockMHz,
    clocksEventReasons: raw.clocksEventReasons === null ? null : decodeClocksEventReasons(raw.clocksEventReasons),
    persistenceMode: raw.persistenceMode,
    eccModeCurrent: raw.eccModeCurrent,
    migEnabled: raw.migModeCurrent === null ? null : raw.migModeCurrent === 1,
    degraded: degradedOf(raw),
  };
}

/**
 * Several reads over a window as one activity: every process seen in any
 * read (a tenant between two jobs' kernels still counts), each with the most
 * memory it was seen holding; every event reason seen; the rest from the last read.
 */
export function mergeReads(reads: RawActivity[], context: ActivityContext): GpuActivity {
  const last = reads.at(-1);
  if (!last) throw new RangeError('mergeReads needs at least one read');
  const merged = toGpuActivity(last, context);
  const byKey = new Map<string, GpuProcess>();
  const reasons = new Set<ClocksEventReason>();
  const degraded = new Set<string>();
  for (const read of reads) {
    const activity = toGpuActivity(read, context);
    for (const process of activity.processes) {
      const key = `${process.pid}/${process.kind}`;
      const seen = byKey.get(key);
      const more = seen && (process.usedMemoryBytes ?? -1) > (seen.usedMemoryBytes ?? -1);
      if (!seen || more) byKey.set(key, { ...process, migDeviceUuid: process.migDeviceUuid ?? seen?.migDeviceUuid ?? null });
    }
    for (const reason of activity.clocksEventReasons ?? []) reasons.add(reason);
    for (const d of activity.degraded) degraded.add(d);
  }
  return {
    ...merged,
    processes: [...byKey.values()].sort((a, b) => a.pid - b.pid || a.kind.localeCompare(b.kind)),
    processListsRead: {
      compute: reads.some((r) => listRead(r, 'compute')),
      graphics: reads.some((r) => listRead(r, 'graphics')),
    },
    clocksEventReasons: merged.clocksEventReasons === null && reasons.size === 0 ? null : [...reasons].sort(byBit),
    degraded: [...degraded],
  };
}

function bitOf(reason: ClocksEventReason): number {
  return reason in CLOCKS_EVENT_REASON_BITS
    ? CLOCKS_EVENT_REASON_BITS[reason as keyof typeof CLOCKS_EVENT_REASON_BITS]
    : 2 ** Number(reason.slice('bit-'.length));
}

function byBit(a: ClocksEventReason, b: ClocksEventReason): number {
  return bitOf(a) - bitOf(b);
}
