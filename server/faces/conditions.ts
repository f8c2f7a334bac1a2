/**
 * The conditions a result was measured under (the document's `conditions`,
 * issue 17), read the same way by every face: whether it was measured on a
 * busy GPU, and one short line of what NVML saw — the picture's footer and
 * the CLI print it, the metrics and the MT4G export carry the fields.
 */
import type { ProbeConditions } from '../model/conditions-schema.js';
import { formatBytes } from './documents.js';

/** Other processes used the GPU while it was measured: an admin's evenIfBusy, TOPOD_PROBE_WHEN=always, or a tenant seen during the probe. */
export function measuredWhileBusy(conditions: ProbeConditions): boolean {
  return conditions.probedWhileBusy || conditions.busyAtStart || conditions.otherProcesses.length > 0;
}

/** "1755–1980" for a range, "1980" when both ends agree. */
function span(a: number, b: number): string {
  const low = Math.round(Math.min(a, b));
  const high = Math.round(Math.max(a, b));
  return low === high ? String(low) : `${low}–${high}`;
}

/** "1 other process (2.25 GiB)", "3 other processes", or the reason NVML gave when no process was listed. */
function tenantsText(conditions: ProbeConditions): string {
  const count = conditions.otherProcesses.length;
  if (count === 0) return conditions.busyReason?.replace(/^gpu-busy:\s*/, '') ?? 'other processes';
  const memory = conditions.otherProcesses.reduce((sum, p) => sum + (p.usedMemoryBytes ?? 0), 0);
  return `${count} other process${count === 1 ? '' : 'es'}${memory > 0 ? ` (${formatBytes(memory)})` : ''}`;
}

export interface ConditionsLine {
  text: string;
  /** Measured on a busy GPU: show it as a warning. */
  busy: boolean;
}

/**
 * One short line: "measured on a busy GPU: 1 other process (2.25 GiB) · SM 1755–1980 MHz · 61–63 °C · clocks held back: sw-power-cap",
 * or "idle GPU · SM 1980 MHz · 61 °C"; "conditions unknown: <why>" when NVML was not there.
 */
export function conditionsLine(conditions: ProbeConditions): ConditionsLine {
  if (conditions.source === 'none') return { text: `conditions unknown${conditions.note ? `: ${conditions.note}` : ''}`, busy: false };
  const busy = measuredWhileBusy(conditions);
  const parts = [busy ? `measured on a busy GPU: ${tenantsText(conditions)}` : 'idle GPU'];
  if (conditions.smClockMHz) parts.push(`SM ${span(conditions.smClockMHz.min, conditions.smClockMHz.max)} MHz`);
  const { start, end } = conditions.temperatureC;
  if (start !== null || end !== null) parts.push(`${span(start ?? (end as number), end ?? (start as number))} °C`);
  if (conditions.clocksEventReasons.length > 0) parts.push(`clocks held back: ${conditions.clocksEventReasons.join(', ')}`);
  return { text: parts.join(' · '), busy };
}
