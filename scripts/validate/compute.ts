/**
 * validate:gpu's compute tables (issue 10): the GPC map, occupancy per
 * cluster size, barrier latencies beside the thread-block-cluster paper's
 * (read from the reference file's "thread block clusters" section, never
 * from code), DSMEM against local shared memory and the L2, and cluster
 * launch overhead — with the orderings the issue expects checked in words.
 */
import type { ComputeTopology } from '../../server/model/compute-schema.js';
import { sameInEveryRun } from './same-in-every-run.js';
import type { LatencyValue } from '../../server/model/document.js';

/** Barrier latencies the reference gives, in cycles (a range keeps both ends). */
export interface BarrierReference {
  arrive?: [number, number];
  wait?: [number, number];
  clusterSync?: [number, number];
  syncthreads?: [number, number];
  gridSync?: [number, number];
  /** Idle SMs at cluster size, e.g. {16: 18, 8: 4}. */
  idleSms: Record<number, number>;
  /** The heading of the section the values came from (it names the board). */
  heading: string;
}

const TOLERANCE = 0.25;

/** Reads the "thread block clusters" section of the reference Markdown; null when there is none. */
export function parseBarrierReference(markdown: string): BarrierReference | null {
  const sections = markdown.split(/^## /m);
  const section = sections.find((s) => /thread block cluster/i.test(s.split('\n')[0] ?? ''));
  if (!section) return null;
  const text = section.replace(/\s+/g, ' ');
  const range = (pattern: RegExp): [number, number] | undefined => {
    const match = pattern.exec(text);
    if (!match) return undefined;
    const low = Number(match[1]);
    return [low, match[2] ? Number(match[2]) : low];
  };
  const number = String.raw`~?(\d+)(?:\s*[–-]\s*(\d+))?`;
  const idle = /idle SMs at cluster size ([\d/]+): ([\d/]+)/i.exec(text);
  const idleSms: Record<number, number> = {};
  if (idle) {
    const sizes = idle[1]!.split('/').map(Number);
    const counts = idle[2]!.split('/').map(Number);
    sizes.forEach((size, i) => {
      if (counts[i] !== undefined) idleSms[size] = counts[i];
    });
  }
  return {
    heading: section.split('\n')[0]!.trim(),
    arrive: range(new RegExp(`arrive ${number}`, 'i')),
    wait: range(new RegExp(`wait ${number}`, 'i')),
    clusterSync: range(new RegExp(`cluster\\.sync ${number}`, 'i')),
    syncthreads: range(new RegExp(`__syncthreads ${number}`, 'i')),
    gridSync: range(new RegExp(`grid\\.sync ${number}`, 'i')),
    idleSms,
  };
}

/** Within TOLERANCE of the reference range (either end). */
export function barrierVerdict(measured: number, reference: [number, number] | undefined): string {
  if (!reference) return '';
  const [low, high] = reference;
  if (measured >= low * (1 - TOLERANCE) && measured <= high * (1 + TOLERANCE)) return 'within 25 %';
  const nearest = measured < low ? low : high;
  return `DIFFERS (${(((measured - nearest) / nearest) * 100).toFixed(0)} %)`;
}

const cycles = (value: LatencyValue | undefined): string => (value ? value.p50.toFixed(0) : '—');
const rate = (bytesPerSecond: number | undefined): string =>
  bytesPerSecond === undefined ? '—' : `${(bytesPerSecond / 1e9).toFixed(1)} GB/s`;
const referenceCell = (reference: [number, number] | undefined): string =>
  reference ? (reference[0] === reference[1] ? `${reference[0]}` : `${reference[0]}–${reference[1]}`) : '—';

/** The compute section as plain-text tables and checks; [] lines when the document has none. */
export function renderCompute(compute: ComputeTopology | undefined, reference: BarrierReference | null): string[] {
  if (!compute) return ['compute: not in this document'];
  const lines: string[] = [];
  const sms = compute.multiprocessorCount.value;
  lines.push(
    `compute: ${sms} SMs, ${compute.coresPerSm?.value ?? '?'} cores and ${compute.warpSchedulersPerSm?.value ?? '?'} schedulers per SM, SM clock ${compute.smClock ? (compute.smClock.value / 1e6).toFixed(0) : '?'} MHz`,
  );
  const gpcs = compute.gpcs;
  if (gpcs) {
    const inGpcs = gpcs.smsPerGpc.reduce((a, b) => a + b, 0);
    const inTpcs = gpcs.tpcsOfUnknownGpc.flat().length;
    const placed = inGpcs + inTpcs;
    lines.push(
      `GPCs: ${gpcs.count.value} (SMs per GPC ${gpcs.smsPerGpc.join(' ')}; ${inGpcs} SMs in GPCs + ${inTpcs} in ${gpcs.tpcsOfUnknownGpc.length} TPCs of unknown GPC = ${placed} of ${sms} SMs${placed === sms ? '' : ' — DIFFERS'}; unplaced ${gpcs.unplacedSmIds.length}; map confidence ${gpcs.confidence.toFixed(2)})`,
      `TPCs: ${gpcs.tpcs ? `${gpcs.tpcs.length} SM pairs told apart by clusters of two` : 'not told apart'}; the map explains cudaOccupancyMaxActiveClusters for ${gpcs.occupancyAgreement === null ? '?' : `${(gpcs.occupancyAgreement * 100).toFixed(0)} %`} of cluster sizes`,
    );
    if (gpcs.tpcsOfUnknownGpc.length)
      lines.push(`TPCs of unknown GPC (only ever in clusters of two): ${gpcs.tpcsOfUnknownGpc.map((t) => t.join('+')).join(', ')}`);
  } else lines.push('GPCs: not measured');
  const clusters = compute.clusters;
  if (!clusters.supported) return [...lines, `clusters: unsupported (${clusters.reason ?? 'no reason given'})`];
  lines.push(
    `clusters: max portable ${clusters.maxPortableClusterSize?.value ?? '?'}, max non-portable ${clusters.maxClusterSize?.value ?? '?'}`,
  );
  lines.push(
    '| cluster size | active clusters | idle SMs (occupancy) | idle SMs (measured) | reference idle (' +
      (reference?.heading ?? 'none') +
      ') |',
    '|---|---|---|---|---|',
  );
  for (const row of clusters.bySize) {
    lines.push(
      `| ${row.clusterSize} | ${row.activeClusters} | ${row.idleSms} | ${row.measuredIdleSms ?? '—'} | ${reference?.idleSms[row.clusterSize] ?? '—'} |`,
    );
  }
  lines.push(
    '',
    '| cluster size | threads/block | arrive | wait | cluster.sync | __syncthreads | grid.sync | (cycles, p50) |',
    '|---|---|---|---|---|---|---|---|',
  );
  for (const row of clusters.sync) {
    lines.push(
      `| ${row.clusterSize} | ${row.threadsPerBlock} | ${cycles(row.arrive)} | ${cycles(row.wait)} | ${cycles(row.clusterSync)} | ${cycles(row.syncthreads)} | ${cycles(row.gridSync)} | |`,
    );
  }
  if (reference) {
    lines.push(
      `| reference | | ${referenceCell(reference.arrive)} | ${referenceCell(reference.wait)} | ${referenceCell(reference.clusterSync)} | ${referenceCell(reference.syncthreads)} | ${referenceCell(reference.gridSync)} | |`,
    );
    // The paper's arrive figure holds for clusters of 1 to 8 blocks (16 costs more): compare the largest of those.
    const largest = [...clusters.sync]
      .filter((r) => r.threadsPerBlock === 1 && r.clusterSize <= 8)
      .sort((a, b) => b.clusterSize - a.clusterSize)[0];
    if (largest) {
      const checks = (['arrive', 'wait', 'clusterSync', 'syncthreads', 'gridSync'] as const).map(
        (name) => `${name} ${barrierVerdict(largest[name].p50, reference[name]) || 'no reference'}`,
      );
      lines.push(`barriers at cluster size ${largest.clusterSize}, 1 thread/block, against the reference: ${checks.join('; ')}`);
    }
  }
  const dsmem = clusters.dsmem;
  if (dsmem) {
    const local = dsmem.localLatency.p50;
    const remote = dsmem.remoteLatency.p50;
    const l2 = dsmem.l2Latency.p50;
    lines.push(
      '',
      `DSMEM (SMs ${dsmem.smIds.join(' → ')}): local shared ${local.toFixed(0)}, remote (DSMEM) ${remote.toFixed(0)}, L2 ${l2.toFixed(0)} cycles — ${local < remote && remote < l2 ? 'local < DSMEM < L2 as expected' : 'ORDER DIFFERS'}`,
      `DSMEM bandwidth over ${dsmem.transferBytes} B: push ${rate(dsmem.pushBandwidth.value)}, pull ${rate(dsmem.pullBandwidth.value)}, global ${rate(dsmem.globalBandwidth.value)} — ${dsmem.pushBandwidth.value > dsmem.pullBandwidth.value ? 'push > pull as the paper found' : 'PULL ≥ PUSH (differs from the paper)'}`,
    );
  }
  if (clusters.launchOverhead.length) {
    lines.push('', '| cluster size | blocks | clustered launch | plain launch | overhead |', '|---|---|---|---|---|');
    for (const row of clusters.launchOverhead) {
      lines.push(
        `| ${row.clusterSize} | ${row.blocks} | ${(row.clusterSeconds * 1e6).toFixed(1)} µs | ${(row.plainSeconds * 1e6).toFixed(1)} µs | ${(row.overheadFraction * 100).toFixed(1)} % |`,
      );
    }
  }
  return lines;
}

/** Whether every run measured the same SM → GPC map (the issue's stability check). */
export function sameGpcMap(computes: Array<ComputeTopology | undefined>): string {
  return sameInEveryRun(
    'GPC map',
    computes.map((c) => c?.gpcs?.smIds ?? null),
  );
}
