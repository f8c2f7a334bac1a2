/**
 * How the faces (metrics, picture, MT4G export, fit advice, CLI) read the
 * topology: the objects the JSON route's prepared documents were serialised
 * from (the topology service keeps one while its bytes stay the same), so a
 * scrape or a picture never parses a document.
 * The faces read whatever elements and attributes a document has: nothing
 * here lists them.
 */
import type { ElementTopology, GpuTopologyDocument, LatencyValue, MeasuredValue, MigInstanceTopologyDocument } from '../model/document.js';
import type { PreparedDocument, TopologyApi, TopologyLookup } from '../model/topology-api.js';

export type AnyTopologyDocument = GpuTopologyDocument | MigInstanceTopologyDocument;

/** The document object behind a prepared one. */
export function parsedDocument(document: PreparedDocument): AnyTopologyDocument {
  return document.value;
}

export function isMigDocument(document: AnyTopologyDocument): document is MigInstanceTopologyDocument {
  return 'kind' in document && document.kind === 'mig-instance';
}

export type ParsedLookup = Exclude<TopologyLookup, { kind: 'ready' }> | { kind: 'ready'; document: AnyTopologyDocument; etag: string };

/** getTopology with the document parsed. */
export function lookupDocument(topology: TopologyApi, id: string): ParsedLookup {
  const lookup = topology.getTopology(id);
  if (lookup.kind !== 'ready') return lookup;
  return { kind: 'ready', document: parsedDocument(lookup.document), etag: lookup.document.etag };
}

/** A measured value (size, bandwidth, …) as opposed to a latency or a list. */
export function isMeasuredValue(value: unknown): value is MeasuredValue {
  return (
    typeof value === 'object' && value !== null && 'value' in value && typeof (value as MeasuredValue).value === 'number' && 'unit' in value
  );
}

export function isLatencyValue(value: unknown): value is LatencyValue {
  return typeof value === 'object' && value !== null && 'mean' in value && (value as LatencyValue).unit === 'cycles';
}

/** Every element the document has, in its own order. */
export function elementEntries(document: AnyTopologyDocument): Array<[string, ElementTopology]> {
  return Object.entries(document.elements).filter((entry): entry is [string, ElementTopology] => entry[1] !== undefined);
}

/** Every measured attribute of an element (size, lineSize, readBandwidth, amount, any added later). */
export function measuredAttributes(element: ElementTopology): Array<[string, MeasuredValue]> {
  return Object.entries(element).filter((entry): entry is [string, MeasuredValue] => isMeasuredValue(entry[1]));
}

/** Every latency-like attribute of an element (latency, and any added later with the same shape). */
export function latencyAttributes(element: ElementTopology): Array<[string, LatencyValue]> {
  return Object.entries(element).filter((entry): entry is [string, LatencyValue] => isLatencyValue(entry[1]));
}

const BINARY_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** 240640 → "235 KiB", 52428800 → "50 MiB": binary units, at most 3 significant digits, trailing zeros dropped. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < BINARY_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${Number(value.toFixed(digits))} ${BINARY_UNITS[unit]}`;
}

/** bytes/s → "3.35 TB/s" style, decimal as bandwidths are quoted. */
export function formatBandwidth(bytesPerSecond: number): string {
  const units = ['B/s', 'kB/s', 'MB/s', 'GB/s', 'TB/s'];
  let value = bytesPerSecond;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${Number(value.toPrecision(3))} ${units[unit]}`;
}

/** "38 cy (19.2 ns)": cycles, and nanoseconds where the document knows them. */
export function formatLatency(latency: LatencyValue): string {
  const cycles = `${Number(latency.mean.toFixed(latency.mean >= 100 ? 0 : 1))} cy`;
  return latency.meanNs === undefined ? cycles : `${cycles} (${Number(latency.meanNs.toPrecision(3))} ns)`;
}

/** Human label of an element name: l1 → "L1", constantL15 → "Constant L1.5", readOnly → "Read-only". */
export function elementLabel(name: string): string {
  const known: Record<string, string> = {
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
  return known[name] ?? name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/^./, (c) => c.toUpperCase());
}
