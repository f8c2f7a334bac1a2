/**
 * The topology picture: one GPU drawn the way lstopo draws a machine, nested
 * boxes from the outside in — the GPU, its SMs (one square each, GPCs as far
 * as known), one SM opened up with every per-SM element (size, latency in
 * cycles and ns, line), the L2 with its segments, device memory, and the
 * measured bandwidths on the links between them. With MIG on, each GPU
 * instance is a coloured region: its SMs, its memory slices and the L2 slices
 * in front of them, with its L2 share. The footer says, in one line, the
 * conditions the result was measured under (a warning colour on a busy GPU);
 * a result that recorded none has no footer.
 *
 * Deterministic: the same document gives the same bytes (no clock, no
 * randomness, fixed number formatting), so golden files compare exactly.
 * Elements are read from the document, whatever it holds: the global ones
 * (L2, L3, device memory) are levels, every other one is drawn inside the SM.
 */
import type { GpcLayout } from '../model/compute-schema.js';
import type { ElementTopology, GpuTopologyDocument, MigInstanceView } from '../model/document.js';
import { conditionsLine } from './conditions.js';
import { elementEntries, elementLabel, formatBandwidth, formatBytes, formatLatency } from './documents.js';

const WIDTH = 960;
const MARGIN = 16;
const FONT = 'DejaVu Sans, Verdana, sans-serif';
/** Levels shared by the whole GPU (or a MIG instance's slice of it); every other element lives in each SM. */
const GLOBAL_ELEMENTS = new Set(['l2', 'l3', 'deviceMemory']);
/** Instance colours, distinguishable and legible behind dark text. */
const PALETTE = ['#8ecae6', '#ffb703', '#90be6d', '#f4978e', '#b8a1e3', '#f9c74f', '#43aa8b', '#e9c46a'];

const COLOURS = {
  gpu: '#f2f2f2',
  sm: '#fbe3c8',
  cache: '#ffffff',
  l2: '#d9ead3',
  memory: '#cfe2f3',
  stroke: '#444444',
  idle: '#e6e6e6',
  warning: '#b3261e',
  quiet: '#555555',
};

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c);
}

/** Fixed formatting of coordinates: integers stay integers, others keep one decimal. */
const n = (value: number): string => (Number.isInteger(value) ? String(value) : value.toFixed(1));

class Canvas {
  readonly parts: string[] = [];

  rect(x: number, y: number, w: number, h: number, fill: string, extra = ''): void {
    this.parts.push(
      `<rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}" fill="${fill}" stroke="${COLOURS.stroke}" stroke-width="1"${extra}/>`,
    );
  }

  text(x: number, y: number, content: string, size = 12, extra = ''): void {
    this.parts.push(`<text x="${n(x)}" y="${n(y)}" font-size="${size}"${extra}>${escapeXml(content)}</text>`);
  }

  line(x1: number, y1: number, x2: number, y2: number): void {
    this.parts.push(`<line x1="${n(x1)}" y1="${n(y1)}" x2="${n(x2)}" y2="${n(y2)}" stroke="${COLOURS.stroke}" stroke-width="2"/>`);
  }
}

/** "235 KiB · 38 cy (19.2 ns) · line 128 B" — what an element's box says. */
export function elementSummary(element: ElementTopology): string {
  const parts: string[] = [];
  if (element.size) parts.push(`${element.size.bound === 'lower' ? '≥ ' : ''}${formatBytes(element.size.value)}`);
  if (element.latency) parts.push(formatLatency(element.latency));
  if (element.lineSize) parts.push(`line ${formatBytes(element.lineSize.value)}`);
  if (element.fetchGranularity) parts.push(`fetch ${formatBytes(element.fetchGranularity.value)}`);
  if (element.missPenalty) parts.push(`miss +${Math.round(element.missPenalty.value)} cy`);
  return parts.join(' · ');
}

function bandwidthLabel(element: ElementTopology | undefined): string | null {
  if (!element) return null;
  const parts = [
    element.readBandwidth && `read ${formatBandwidth(element.readBandwidth.value)}`,
    element.writeBandwidth && `write ${formatBandwidth(element.writeBandwidth.value)}`,
  ];
  const text = parts.filter((p): p is string => typeof p === 'string').join(', ');
  return text === '' ? null : text;
}

/** Which GPU instance each SM and each memory slice belongs to (-1: none), in placement order. */
function migRegions(instances: MigInstanceView[], smCount: number, sliceCount: number): { sm: number[]; slice: number[] } {
  const sm = new Array<number>(smCount).fill(-1);
  const slice = new Array<number>(sliceCount).fill(-1);
  let nextSm = 0;
  const ordered = instances
    .map((instance, index) => ({ instance, index }))
    .sort(
      (a, b) =>
        (a.instance.placement?.start ?? 0) - (b.instance.placement?.start ?? 0) || a.instance.gpuInstanceId - b.instance.gpuInstanceId,
    );
  for (const { instance, index } of ordered) {
    for (let i = 0; i < (instance.multiprocessorCount ?? 0) && nextSm < smCount; i++) sm[nextSm++] = index;
    const start = instance.placement?.start ?? 0;
    for (let s = start; s < start + instance.l2.memorySlices && s < sliceCount; s++) slice[s] = index;
  }
  return { sm, slice };
}

/** The SM rows of the picture: each measured GPC, then the TPCs of unknown GPC; one unlabelled row of every SM without a map. */
function smGroups(gpcs: GpcLayout | null, smCount: number): Array<{ label: string; sms: number[] }> {
  if (!gpcs) return [{ label: '', sms: Array.from({ length: smCount }, (_, sm) => sm) }];
  const groups = gpcs.smIds.map((sms, i) => ({ label: `GPC ${i} · ${sms.length} SMs`, sms }));
  const loose = gpcs.tpcsOfUnknownGpc.flat();
  if (loose.length) groups.push({ label: `${gpcs.tpcsOfUnknownGpc.length} TPCs, GPC unknown`, sms: loose });
  if (gpcs.unplacedSmIds.length) groups.push({ label: 'not placed', sms: [...gpcs.unplacedSmIds] });
  return groups;
}

export function topologySvg(document: GpuTopologyDocument): string {
  const canvas = new Canvas();
  const elements = elementEntries(document);
  const perSm = elements.filter(([name, element]) => !GLOBAL_ELEMENTS.has(name) && element.amount?.per !== 'gpu');
  const global = elements.filter(([name]) => !perSm.some(([other]) => other === name));
  const mig = document.mig;
  // Without the probe's hello (a result rebuilt from series), the largest MIG profile still says how many SMs there are.
  const smCount = document.device.multiprocessorCount ?? Math.max(0, ...(mig?.profiles.map((p) => p.multiprocessorCount) ?? []));
  const migOn = mig?.mode?.current === 'enabled' && mig.instances.length > 0;
  const instances = migOn ? mig.instances : [];
  const sliceCount = migOn ? (mig.memorySliceCount ?? 0) : 0;
  const regions = migRegions(instances, smCount, sliceCount);
  const colourOf = (instance: number) => (instance < 0 ? COLOURS.idle : (PALETTE[instance % PALETTE.length] as string));

  let y = MARGIN;
  const inner = WIDTH - 2 * MARGIN;
  const body: string[] = [];
  const title = `${document.gpu.name} — ${document.gpu.uuid}${document.simulated ? ' (simulated)' : ''}`;

  // SMs: squares, one row per measured GPC (a flat grid when the GPCs are not known), coloured by GPU instance with MIG on.
  const smTop = y + 44;
  const cell = 18;
  const gpcs = document.compute?.gpcs ?? null;
  const groups = smGroups(gpcs, smCount);
  const labelWidth = gpcs ? 150 : 0;
  const perRow = Math.max(1, Math.floor((inner - 24 - labelWidth) / (cell + 4)));
  const rowsOf = (sms: readonly number[]) => Math.max(1, Math.ceil(sms.length / perRow));
  const smRows = groups.reduce((sum, group) => sum + rowsOf(group.sms), 0);
  const smBoxHeight = 28 + smRows * (cell + 4) + 8;
  canvas.rect(MARGIN + 8, smTop, inner - 16, smBoxHeight, COLOURS.sm);
  const gpcTitle = gpcs ? `${gpcs.count.value} GPCs (measured from cluster placements)` : 'GPCs not measured';
  canvas.text(
    MARGIN + 16,
    smTop + 18,
    `${smCount} SMs${document.device.architecture ? ` (${document.device.architecture})` : ''} — ${gpcTitle}`,
    13,
    ' font-weight="bold"',
  );
  // NVML says how many SMs a GPU instance has, never which: the colours show the counts, not the placement.
  if (migOn) canvas.text(WIDTH - MARGIN - 16, smTop + 18, 'instance colours illustrative', 11, ' text-anchor="end" font-style="italic"');
  let smRow = 0;
  for (const group of groups) {
    const rowTop = smTop + 28 + smRow * (cell + 4);
    if (group.label) canvas.text(MARGIN + 16, rowTop + 13, group.label, 11);
    group.sms.forEach((sm, k) => {
      const left = MARGIN + 16 + labelWidth + (k % perRow) * (cell + 4);
      canvas.rect(left, rowTop + Math.floor(k / perRow) * (cell + 4), cell, cell, migOn ? colourOf(regions.sm[sm] ?? -1) : COLOURS.cache);
    });
    smRow += rowsOf(group.sms);
  }
  y = smTop + smBoxHeight + 12;

  // One SM opened up: every per-SM element, one row each.
  const rowHeight = 22;
  const smDetailHeight = 30 + Math.max(1, perSm.length) * rowHeight + 8;
  canvas.rect(MARGIN + 8, y, inner - 16, smDetailHeight, COLOURS.sm);
  canvas.text(MARGIN + 16, y + 19, 'Each SM', 13, ' font-weight="bold"');
  if (perSm.length === 0) canvas.text(MARGIN + 24, y + 30 + 15, 'no per-SM cache measured', 12, ' font-style="italic"');
  perSm.forEach(([name, element], index) => {
    const top = y + 28 + index * rowHeight;
    canvas.rect(MARGIN + 20, top, inner - 40, rowHeight - 4, COLOURS.cache);
    const amount = element.amount?.per === 'sm' && element.amount.value !== 1 ? ` ×${element.amount.value}` : '';
    canvas.text(MARGIN + 28, top + 13, `${elementLabel(name)}${amount}`, 12, ' font-weight="bold"');
    const shared =
      element.sharedWith && element.sharedWith.length > 0
        ? ` · shares its cache with ${element.sharedWith.map(elementLabel).join(', ')}`
        : '';
    canvas.text(MARGIN + 170, top + 13, elementSummary(element) + shared, 12);
  });
  y += smDetailHeight;

  // The global levels, outermost last, each linked to the one above with its bandwidth.
  for (const [name, element] of global) {
    const bandwidth = bandwidthLabel(element);
    canvas.line(WIDTH / 2, y, WIDTH / 2, y + 26);
    if (bandwidth) canvas.text(WIDTH / 2 + 8, y + 17, bandwidth, 11);
    y += 26;
    const isL2 = name === 'l2';
    const segments = isL2 && element.amount?.per === 'gpu' ? element.amount.value : 0;
    const hasSlices = sliceCount > 0 && (isL2 || name === 'deviceMemory');
    const height = 36 + (segments > 1 ? 34 : 0) + (hasSlices ? 26 : 0);
    canvas.rect(MARGIN + 8, y, inner - 16, height, name === 'deviceMemory' ? COLOURS.memory : COLOURS.l2);
    canvas.text(MARGIN + 16, y + 19, elementLabel(name), 13, ' font-weight="bold"');
    canvas.text(MARGIN + 170, y + 19, elementSummary(element), 12);
    let inside = y + 28;
    if (segments > 1) {
      const width = (inner - 40 - (segments - 1) * 8) / segments;
      for (let s = 0; s < segments; s++) {
        canvas.rect(MARGIN + 20 + s * (width + 8), inside, width, 26, COLOURS.cache);
        const label = element.segmentSize
          ? `segment ${s + 1}: ${formatBytes(element.segmentSize.value)} (what one SM reaches)`
          : `segment ${s + 1}`;
        canvas.text(MARGIN + 28 + s * (width + 8), inside + 17, label, 11);
      }
      inside += 34;
    }
    if (hasSlices) {
      const width = (inner - 40) / sliceCount;
      for (let s = 0; s < sliceCount; s++) {
        canvas.rect(MARGIN + 20 + s * width, inside, width, 18, colourOf(regions.slice[s] ?? -1));
        canvas.text(MARGIN + 24 + s * width, inside + 13, `${isL2 ? 'L2' : 'mem'} slice ${s}`, 10);
      }
    }
    y += height;
  }

  // MIG legend: one line per GPU instance, in its colour.
  if (migOn) {
    y += 14;
    canvas.text(
      MARGIN,
      y + 12,
      `MIG on: ${instances.length} GPU instances, ${sliceCount} memory slices${mig.l2SegmentBytes !== null ? `; one SM reaches at most ${formatBytes(mig.l2SegmentBytes)} of L2` : ''}`,
      13,
      ' font-weight="bold"',
    );
    y += 20;
    canvas.text(
      MARGIN,
      y + 12,
      'SM colours are illustrative: NVML gives each instance’s SM count, not which SMs it holds. Memory and L2 slices follow NVML’s placements where it gives them.',
      11,
      ' font-style="italic"',
    );
    y += 18;
    instances.forEach((instance, index) => {
      canvas.rect(MARGIN + 8, y, 14, 14, colourOf(index));
      const share =
        instance.l2.bytes === null
          ? 'L2 share unknown'
          : `L2 share ${formatBytes(instance.l2.bytes)} (derived from ${instance.l2.source === 'nvml' ? 'NVML placement' : 'memory size'})`;
      const reach = instance.l2.reachablePerSmBytes === null ? '' : `, one SM reaches ${formatBytes(instance.l2.reachablePerSmBytes)}`;
      const memory = instance.memorySizeBytes === null ? '' : ` · ${formatBytes(instance.memorySizeBytes)}`;
      canvas.text(
        MARGIN + 30,
        y + 12,
        `GI ${instance.gpuInstanceId} · ${instance.profileName ?? `profile ${instance.profileId}`} · ${instance.multiprocessorCount ?? '?'} SMs${memory} · ${instance.l2.memorySlices} slice${instance.l2.memorySlices === 1 ? '' : 's'} · ${share}${reach}`,
        12,
      );
      y += 20;
    });
  }

  // Footer: how the GPU was when measured.
  if (document.conditions) {
    const line = conditionsLine(document.conditions);
    y += 10;
    const style = line.busy ? ` font-weight="bold" fill="${COLOURS.warning}"` : ` fill="${COLOURS.quiet}"`;
    canvas.text(MARGIN, y + 12, line.busy ? `⚠ ${line.text}` : line.text, 12, ` class="conditions${line.busy ? ' busy' : ''}"${style}`);
    y += 18;
  }

  const height = y + MARGIN;
  body.push(
    `<rect x="${MARGIN / 2}" y="${MARGIN / 2}" width="${WIDTH - MARGIN}" height="${height - MARGIN}" fill="${COLOURS.gpu}" stroke="${COLOURS.stroke}" stroke-width="2" rx="6"/>`,
  );
  body.push(`<text x="${MARGIN}" y="${MARGIN + 18}" font-size="15" font-weight="bold">${escapeXml(title)}</text>`);
  const measured = `probe ${document.probe.probeVersion}, analysis ${document.probe.analysisVersion}, driver ${document.probe.driverVersion}${document.status.stale ? ' — stale, re-probe queued' : ''}`;
  body.push(`<text x="${MARGIN}" y="${MARGIN + 36}" font-size="11">${escapeXml(measured)}</text>`);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${n(height)}" viewBox="0 0 ${WIDTH} ${n(height)}" font-family="${FONT}">`,
    `<title>${escapeXml(title)}</title>`,
    ...body,
    ...canvas.parts,
    '</svg>',
    '',
  ].join('\n');
}
