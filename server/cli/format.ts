/**
 * What the CLI prints for people: plain aligned tables (no colours, so a pipe
 * or a log gets the same text). Pure functions of the API's answers; they
 * read whatever elements and attributes a document has.
 */
import type { ElementTopology, MeasuredValue } from '../model/document.js';
import type { GpuSummary } from '../model/gpu.js';
import type { ProbeJob } from '../model/job.js';
import { conditionsLine } from '../faces/conditions.js';
import { elementEntries, elementLabel, formatBandwidth, formatBytes, formatLatency, type AnyTopologyDocument } from '../faces/documents.js';

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

const sizeText = (value: MeasuredValue | undefined): string => {
  if (!value) return '';
  const prefix = value.bound === 'lower' ? '≥ ' : value.bound === 'upper' ? '≤ ' : '';
  return prefix + formatBytes(value.value);
};

const bandwidthText = (element: ElementTopology): string =>
  [element.readBandwidth && `r ${formatBandwidth(element.readBandwidth.value)}`, element.writeBandwidth && `w ${formatBandwidth(element.writeBandwidth.value)}`]
    .filter((part): part is string => typeof part === 'string')
    .join(', ');

/** The lowest confidence among an element's values: how sure topod is of the row as a whole. */
function confidenceText(element: ElementTopology): string {
  const values = Object.values(element)
    .map((value) => (typeof value === 'object' && value !== null && 'confidence' in value ? (value as { confidence?: number }).confidence : undefined))
    .filter((c): c is number => typeof c === 'number');
  return values.length === 0 ? '' : Math.min(...values).toFixed(2);
}

/** element, size, latency, line, fetch, bandwidth, confidence — one row per element the document has; then the conditions it was measured under, where recorded. */
export function topologyTable(document: AnyTopologyDocument): string {
  const rows = elementEntries(document).map(([name, element]) => [
    elementLabel(name),
    sizeText(element.size) + (element.amount ? ` × ${element.amount.value}${element.amount.per === 'sm' ? '/SM' : ''}` : ''),
    element.latency ? formatLatency(element.latency) : '',
    element.lineSize ? formatBytes(element.lineSize.value) : '',
    element.fetchGranularity ? formatBytes(element.fetchGranularity.value) : '',
    bandwidthText(element),
    confidenceText(element),
  ]);
  const title = 'kind' in document ? `${document.migDeviceUuid} (MIG instance of ${document.parent.name})` : `${document.gpu.name} ${document.gpu.uuid}${document.simulated ? ' (simulated)' : ''}`;
  const conditions = 'conditions' in document && document.conditions ? conditionsLine(document.conditions) : null;
  const footer = conditions ? `\n${conditions.busy ? 'warning: ' : ''}${conditions.text}` : '';
  return `${title}\n${table(['element', 'size', 'latency', 'line', 'fetch', 'bandwidth', 'confidence'], rows)}${footer}`;
}

export function gpuTable(gpus: GpuSummary[]): string {
  return table(
    ['index', 'uuid', 'name', 'probe', 'stale', 'present', 'MIG devices'],
    gpus.map((gpu) => [
      String(gpu.index),
      gpu.uuid,
      gpu.name + (gpu.simulated ? ' (sim)' : ''),
      gpu.probe.status,
      gpu.probe.stale ? 'yes' : 'no',
      gpu.present ? 'yes' : 'no',
      String(gpu.migDeviceUuids.length),
    ]),
  );
}

/** A job's phase; for one waiting on a GPU other processes use, why (its phase) and since when. */
export function jobPhaseText(job: ProbeJob): string {
  if (job.state !== 'waiting') return job.phase ?? '';
  return `${job.phase ?? 'the GPU is busy'}${job.waitingSince ? ` (waiting since ${job.waitingSince})` : ''}`;
}

/** The state, marked when the job measures even on a busy GPU. */
const stateText = (job: ProbeJob): string => (job.evenIfBusy ? `${job.state} (even if busy)` : job.state);

export function jobTable(jobs: ProbeJob[]): string {
  return table(
    ['id', 'gpu', 'state', 'progress', 'phase', 'created', 'error'],
    jobs.map((job) => [
      job.id,
      job.gpuUuid,
      stateText(job),
      `${Math.round(job.progress * 100)}%`,
      jobPhaseText(job),
      job.createdAt,
      job.error ? `${job.error.code}: ${job.error.message}` : '',
    ]),
  );
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1e3, kb: 1e3, kib: 1024, m: 1e6, mb: 1e6, mib: 1024 ** 2, g: 1e9, gb: 1e9, gib: 1024 ** 3 };

/** "24MiB", "512 KiB", "1e6", "40gb" → bytes. */
export function parseSize(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const scale = match ? SIZE_UNITS[(match[2] ?? '').toLowerCase()] : undefined;
  if (!match || scale === undefined) throw new Error(`"${text}" is not a size: write bytes or a number with KiB, MiB, GiB, kB, MB or GB`);
  return Math.round(Number(match[1]) * scale);
}
