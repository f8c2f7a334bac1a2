/**
 * What the CLI prints for people: plain aligned tables (no colours, so a pipe
 * or a log gets the same text). Pure functions of the API's answers; they
 * read whatever elements and attributes a document has. `view.wide` adds
 * columns; `view.headers` false leaves only the rows (for scripts).
 */
import type { ElementTopology, LatencyValue, MeasuredValue } from '../model/document.js';
import type { GpuSummary, MigDeviceSummary } from '../model/gpu.js';
import type { ProbeJob } from '../model/job.js';
import { conditionsLine } from '../faces/conditions.js';
import { elementEntries, elementLabel, formatBandwidth, formatBytes, formatLatency, type AnyTopologyDocument } from '../faces/documents.js';
import type { TableView } from './output.js';

const PEOPLE: TableView = { wide: false, headers: true };

/** Columns padded to their widest cell; with headers, the heading and a rule first. */
export function table(header: string[], rows: string[][], headers = true): string {
  const shown = headers ? [header, ...rows] : rows;
  const widths = header.map((_, column) => Math.max(0, ...shown.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [...(headers ? [line(header), line(widths.map((w) => '-'.repeat(w)))] : []), ...rows.map(line)].join('\n');
}

/** A value's bound as a prefix: "≥ " for a lower bound (a cache at least this large), "≤ " for an upper one. */
const boundPrefix = (value: MeasuredValue): string => (value.bound === 'lower' ? '≥ ' : value.bound === 'upper' ? '≤ ' : '');

/**
 * The size column: an element's size with how many there are. Per GPU (the
 * L2's partitions) the size is the whole, so it reads "2 partitions of
 * 25 MiB"; per SM it is each one's, "64 KiB per SM", "4 × 64 KiB per SM".
 */
export function sizeText(element: ElementTopology): string {
  const { size, amount } = element;
  if (!size) return amount ? `${amount.value}${amount.per === 'sm' ? ' per SM' : ''}` : '';
  const bytes = (value: number) => boundPrefix(size) + formatBytes(value);
  if (amount?.per === 'gpu' && amount.value > 1) return `${amount.value} partitions of ${bytes(size.value / amount.value)}`;
  if (amount?.per === 'sm') return `${amount.value === 1 ? '' : `${amount.value} × `}${bytes(size.value)} per SM`;
  return bytes(size.value);
}

const bandwidthText = (element: ElementTopology): string =>
  [
    element.readBandwidth && `r ${formatBandwidth(element.readBandwidth.value)}`,
    element.writeBandwidth && `w ${formatBandwidth(element.writeBandwidth.value)}`,
  ]
    .filter((part): part is string => typeof part === 'string')
    .join(', ');

/** The lowest confidence among an element's values: how sure topod is of the row as a whole. */
function confidenceText(element: ElementTopology): string {
  const values = Object.values(element)
    .map((value) =>
      typeof value === 'object' && value !== null && 'confidence' in value ? (value as { confidence?: number }).confidence : undefined,
    )
    .filter((c): c is number => typeof c === 'number');
  return values.length === 0 ? '' : Math.min(...values).toFixed(2);
}

/** Where an element's values came from (microbenchmark, api, nvml, derived), each once. */
function sourcesText(element: ElementTopology): string {
  const sources = Object.values(element)
    .map((value) => (typeof value === 'object' && value !== null && 'source' in value ? (value as { source?: unknown }).source : undefined))
    .filter((s): s is string => typeof s === 'string');
  return [...new Set(sources)].join(',');
}

/** A measured value in its unit: bytes in binary units, cycles as "cy". */
const valueText = (value: MeasuredValue): string =>
  value.unit === 'bytes'
    ? boundPrefix(value) + formatBytes(value.value)
    : `${boundPrefix(value)}${Number(value.value.toFixed(1))} ${value.unit === 'cycles' ? 'cy' : value.unit}`;

const percentilesText = (latency: LatencyValue | undefined): string =>
  latency ? `${Math.round(latency.p50)}/${Math.round(latency.p95)} cy` : '';

/**
 * element, size, latency, line, fetch, bandwidth, confidence — one row per
 * element the document has; then the conditions it was measured under,
 * where recorded. Wide adds the latency's p50/p95, what one SM reaches of a
 * partitioned cache (the measured segment), the miss penalty and the sources.
 */
export function topologyTable(document: AnyTopologyDocument, view: TableView = PEOPLE): string {
  const rows = elementEntries(document).map(([name, element]) => {
    const cells = [elementLabel(name), sizeText(element), element.latency ? formatLatency(element.latency) : ''];
    if (view.wide) cells.push(percentilesText(element.latency));
    cells.push(
      element.lineSize ? formatBytes(element.lineSize.value) : '',
      element.fetchGranularity ? formatBytes(element.fetchGranularity.value) : '',
      bandwidthText(element),
    );
    if (view.wide)
      cells.push(element.segmentSize ? valueText(element.segmentSize) : '', element.missPenalty ? valueText(element.missPenalty) : '');
    cells.push(confidenceText(element));
    if (view.wide) cells.push(sourcesText(element));
    return cells;
  });
  const header = view.wide
    ? ['element', 'size', 'latency', 'p50/p95', 'line', 'fetch', 'bandwidth', 'one SM reaches', 'miss penalty', 'confidence', 'sources']
    : ['element', 'size', 'latency', 'line', 'fetch', 'bandwidth', 'confidence'];
  const body = table(header, rows, view.headers);
  if (!view.headers) return body;
  const title =
    'kind' in document
      ? `${document.migDeviceUuid} (MIG instance of ${document.parent.name})`
      : `${document.gpu.name} ${document.gpu.uuid}${document.simulated ? ' (simulated)' : ''}`;
  const conditions = 'conditions' in document && document.conditions ? conditionsLine(document.conditions) : null;
  const footer = conditions ? `\n${conditions.busy ? 'warning: ' : ''}${conditions.text}` : '';
  return `${title}\n${body}${footer}`;
}

const NONE = '-';
const yesNo = (value: boolean) => (value ? 'yes' : 'no');

/**
 * GPUs, each followed by its MIG devices as `nvidia-smi -L` lists them
 * (`MIG 3g.40gb Device 0`, indexed `<gpu>:<device>`), so a MIG UUID to hand
 * to CUDA_VISIBLE_DEVICES or `topod topology` is in the list. `migDevices`
 * holds what the daemon answered for each MIG UUID (null: it did not).
 * Wide adds driver, PCI bus and last result to a GPU, SMs, memory and L2
 * share to a MIG device.
 */
export function gpuTable(
  gpus: GpuSummary[],
  migDevices: ReadonlyMap<string, MigDeviceSummary | null> = new Map(),
  view: TableView = PEOPLE,
): string {
  const rows: string[][] = [];
  for (const gpu of gpus) {
    const row = [
      String(gpu.index),
      gpu.uuid,
      gpu.name + (gpu.simulated ? ' (sim)' : ''),
      gpu.probe.status,
      yesNo(gpu.probe.stale),
      yesNo(gpu.present),
    ];
    if (view.wide) row.push(gpu.driverVersion, gpu.pciBusId ?? NONE, gpu.probe.lastResultAt ?? NONE, NONE, NONE, NONE);
    rows.push(row);
    gpu.migDeviceUuids.forEach((uuid, device) => {
      const mig = migDevices.get(uuid) ?? null;
      const profile = mig?.profileName ?? (mig ? `profile ${mig.profileId}` : 'MIG ?');
      const migRow = [
        `${gpu.index}:${device}`,
        uuid,
        `${profile.startsWith('MIG') ? profile : `MIG ${profile}`} Device ${device}`,
        NONE,
        NONE,
        yesNo(gpu.present),
      ];
      if (view.wide) {
        const l2 = mig?.l2.bytes == null ? NONE : `${formatBytes(mig.l2.bytes)} (${mig.l2.source})`;
        migRow.push(
          NONE,
          NONE,
          NONE,
          mig?.multiprocessorCount == null ? NONE : String(mig.multiprocessorCount),
          mig?.memorySizeBytes == null ? NONE : formatBytes(mig.memorySizeBytes),
          l2,
        );
      }
      rows.push(migRow);
    });
  }
  const header = [
    'index',
    'uuid',
    'name',
    'probe',
    'stale',
    'present',
    ...(view.wide ? ['driver', 'pci bus', 'last result', 'SMs', 'memory', 'L2 share'] : []),
  ];
  return table(header, rows, view.headers);
}

/** A job's phase; for one waiting on a GPU other processes use, why (its phase) and since when. */
export function jobPhaseText(job: ProbeJob): string {
  if (job.state !== 'waiting') return job.phase ?? '';
  return `${job.phase ?? 'the GPU is busy'}${job.waitingSince ? ` (waiting since ${job.waitingSince})` : ''}`;
}

/** The state, marked when the job measures even on a busy GPU. */
const stateText = (job: ProbeJob): string => (job.evenIfBusy ? `${job.state} (even if busy)` : job.state);

/** One row per job; wide adds why it was queued, by whom, which elements, and when it started and ended. */
export function jobTable(jobs: ProbeJob[], view: TableView = PEOPLE): string {
  const header = [
    'id',
    'gpu',
    'state',
    'progress',
    'phase',
    'created',
    'error',
    ...(view.wide ? ['reason', 'requested by', 'only', 'started', 'finished'] : []),
  ];
  return table(
    header,
    jobs.map((job) => [
      job.id,
      job.gpuUuid,
      stateText(job),
      `${Math.round(job.progress * 100)}%`,
      jobPhaseText(job),
      job.createdAt,
      job.error ? `${job.error.code}: ${job.error.message}` : '',
      ...(view.wide ? [job.reason, job.requestedBy, job.only?.join(',') ?? 'all', job.startedAt ?? NONE, job.finishedAt ?? NONE] : []),
    ]),
    view.headers,
  );
}

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  kib: 1024,
  m: 1e6,
  mb: 1e6,
  mib: 1024 ** 2,
  g: 1e9,
  gb: 1e9,
  gib: 1024 ** 3,
};

/** "24MiB", "512 KiB", "1e6", "40gb" → bytes. */
export function parseSize(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const scale = match ? SIZE_UNITS[(match[2] ?? '').toLowerCase()] : undefined;
  if (!match || scale === undefined) throw new Error(`"${text}" is not a size: write bytes or a number with KiB, MiB, GiB, kB, MB or GB`);
  return Math.round(Number(match[1]) * scale);
}
