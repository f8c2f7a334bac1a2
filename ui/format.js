// How the dashboard writes numbers and notes; the same wording as the picture and the CLI (server/faces/).

export function formatBytes(bytes) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${Number(value.toFixed(unit === 0 || value >= 100 ? 0 : value >= 10 ? 1 : 2))} ${units[unit]}`;
}

export function formatBandwidth(bytesPerSecond) {
  const units = ['B/s', 'kB/s', 'MB/s', 'GB/s', 'TB/s'];
  let value = bytesPerSecond;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${Number(value.toPrecision(3))} ${units[unit]}`;
}

export function formatLatency(latency) {
  const cycles = `${Number(latency.mean.toFixed(latency.mean >= 100 ? 0 : 1))} cy`;
  return latency.meanNs === undefined ? cycles : `${cycles} (${Number(latency.meanNs.toPrecision(3))} ns)`;
}

/** A measured value as its unit reads: bytes, bandwidth, cycles, counts. */
export function formatValue(measured) {
  const bound = measured.bound === 'lower' ? '≥ ' : measured.bound === 'upper' ? '≤ ' : '';
  switch (measured.unit) {
    case 'bytes':
      return bound + formatBytes(measured.value);
    case 'bytes/s':
      return bound + formatBandwidth(measured.value);
    case 'cycles':
      return `${bound}${Number(measured.value.toFixed(1))} cy`;
    case 'hz':
      return `${bound}${Number((measured.value / 1e6).toPrecision(4))} MHz`;
    default:
      return `${bound}${measured.value}`;
  }
}

const ELEMENT_LABELS = {
  l1: 'L1',
  l2: 'L2',
  l3: 'L3',
  texture: 'Texture',
  readOnly: 'Read-only',
  constantL1: 'Constant L1',
  constantL15: 'Constant L1.5',
  shared: 'Shared memory',
  deviceMemory: 'Device memory',
  vL1: 'vL1',
  sL1d: 'sL1d',
  lds: 'LDS',
};

export function elementLabel(name) {
  return ELEMENT_LABELS[name] ?? name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/^./, (c) => c.toUpperCase());
}

/**
 * Where a MIG L2 share comes from. It is always computed — L2 × the instance's memory slices ÷ the GPU's — so
 * it is "derived" either way; what differs is where the slice count came from: NVML's placement of the
 * instance (source "nvml"), or its memory size when NVML gave no placement (source "derived").
 */
export function l2ShareBasis(share, totalSlices) {
  const fraction = totalSlices ? ` × ${share.memorySlices}/${totalSlices}` : '';
  return share.source === 'nvml'
    ? `derived: L2${fraction} slices, from NVML placement`
    : `derived: L2${fraction} slices, estimated from memory size`;
}

const span = (a, b) => {
  const low = Math.round(Math.min(a, b));
  const high = Math.round(Math.max(a, b));
  return low === high ? String(low) : `${low}–${high}`;
};

/** The document's `conditions` in one line, as the picture's footer says them (server/faces/conditions.ts). */
export function conditionsNote(conditions) {
  if (conditions.source === 'none') return { text: `conditions unknown${conditions.note ? `: ${conditions.note}` : ''}`, busy: false };
  const processes = conditions.otherProcesses;
  const busy = conditions.probedWhileBusy || conditions.busyAtStart || processes.length > 0;
  const memory = processes.reduce((sum, p) => sum + (p.usedMemoryBytes ?? 0), 0);
  const tenants =
    processes.length === 0
      ? (conditions.busyReason ?? 'other processes').replace(/^gpu-busy:\s*/, '')
      : `${processes.length} other process${processes.length === 1 ? '' : 'es'}${memory > 0 ? ` (${formatBytes(memory)})` : ''}`;
  const parts = [busy ? `measured on a busy GPU: ${tenants}` : 'idle GPU'];
  if (conditions.smClockMHz) parts.push(`SM ${span(conditions.smClockMHz.min, conditions.smClockMHz.max)} MHz`);
  const { start, end } = conditions.temperatureC;
  if (start !== null || end !== null) parts.push(`${span(start ?? end, end ?? start)} °C`);
  if (conditions.clocksEventReasons.length > 0) parts.push(`clocks held back: ${conditions.clocksEventReasons.join(', ')}`);
  return { text: parts.join(' · '), busy };
}

const startEnd = ({ start, end }, unit) =>
  start === null && end === null ? 'not read' : `${start ?? '?'} ${unit} at the start, ${end ?? '?'} ${unit} at the end`;
const yesNo = (value) => (value === null ? 'unknown' : value ? 'on' : 'off');

/** Every field of the conditions, as [label, text] rows. */
export function conditionsRows(conditions) {
  if (conditions.source === 'none') return [['recorded', `no: ${conditions.note ?? 'NVML was not there'}`]];
  const processes = conditions.otherProcesses.map(
    (p) =>
      `pid ${p.pid} (${p.kind}${p.usedMemoryBytes ? `, ${formatBytes(p.usedMemoryBytes)}` : ''}${p.migDeviceUuid ? `, ${p.migDeviceUuid}` : ''})`,
  );
  return [
    ['busy when the probe started', conditions.busyAtStart ? `yes${conditions.busyReason ? `: ${conditions.busyReason}` : ''}` : 'no'],
    ['measured anyway (evenIfBusy)', conditions.probedWhileBusy ? 'yes' : 'no'],
    ['other processes', processes.length === 0 ? 'none seen' : processes.join('; ')],
    [
      'SM clock',
      conditions.smClockMHz
        ? `${span(conditions.smClockMHz.min, conditions.smClockMHz.max)} MHz${conditions.maxSmClockMHz ? ` (max ${conditions.maxSmClockMHz} MHz)` : ''}`
        : 'not read',
    ],
    ['clocks held back by', conditions.clocksEventReasons.length === 0 ? 'nothing' : conditions.clocksEventReasons.join(', ')],
    ['temperature', startEnd(conditions.temperatureC, '°C')],
    ['power', startEnd(conditions.powerWatts, 'W')],
    ['persistence mode', yesNo(conditions.persistenceMode)],
    ['ECC', yesNo(conditions.eccMode)],
    ['NVML reads', String(conditions.samples)],
  ];
}
