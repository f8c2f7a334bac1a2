/**
 * The traffic predictor (issue 20): DRAM bytes for a strided access pattern
 * from a handful of measured parameters, the LLC-memory traffic paper's
 * Table II made general. Pure; used by the analysis (the line-size model and
 * the curve's predictions), the API and the CLI.
 *
 * One pass over an array of `footprintBytes` with one access of
 * `elementBytes` every `strideBytes` makes N = ceil(footprint / stride)
 * accesses over a span of (N − 1) × stride + elementBytes bytes. Device
 * memory moves, per array:
 * - reads: min(span, N × readFillBytes) — dense strides move the whole span,
 *   isolated accesses one fill each (a fill past one transaction is the
 *   prefetch effect);
 * - writes: min(span, N × writeTransactionBytes) — every dirtied sector;
 * - the fill of an allocating store: min(span, N × storeFillBytes) when a
 *   store covers its sector in part (stride > element) and stores allocate
 *   for that target, or the whole span when whole-sector stores read too.
 * read: one array read; write: one written; rmw: one read and written (the
 * read brings the sectors, no extra fill); vecmul: two read, one written.
 */
import type { TrafficPatternName, TrafficTopology } from '../model/traffic-schema.js';

export interface TrafficParameters {
  readTransactionBytes: number;
  writeTransactionBytes: number;
  /** Read bytes of one isolated access (readTransactionBytes × the prefetch factor). */
  readFillBytes: number;
  /** Read bytes an allocating store brings per dirtied sector. */
  storeFillBytes: number;
  storesAllocate: { fresh: boolean; written: boolean };
  fullSectorStoresRead: boolean;
}

export interface TrafficQuery {
  pattern: TrafficPatternName;
  strideBytes: number;
  elementBytes: number;
  footprintBytes: number;
  /** The written array: fresh (never written) or written before. */
  target: 'fresh' | 'written';
}

export interface TrafficPrediction {
  accesses: number;
  usefulBytes: number;
  readBytes: number;
  writeBytes: number;
  bytesPerUsefulByte: number;
}

/** Useful bytes per access: what the pattern's loads and stores ask for. */
export const ACCESSES_PER_ELEMENT: Record<TrafficPatternName, number> = { read: 1, write: 1, rmw: 2, vecmul: 3 };

export function predictTraffic(p: TrafficParameters, q: TrafficQuery): TrafficPrediction {
  const accesses = Math.ceil(q.footprintBytes / q.strideBytes);
  const span = (accesses - 1) * q.strideBytes + q.elementBytes;
  const read = Math.min(span, accesses * p.readFillBytes);
  const written = Math.min(span, accesses * p.writeTransactionBytes);
  const whole = q.strideBytes === q.elementBytes;
  const allocating = whole ? p.fullSectorStoresRead : p.storesAllocate[q.target];
  const storeFill = !allocating ? 0 : whole ? span : Math.min(span, accesses * p.storeFillBytes);
  let readBytes = 0;
  let writeBytes = 0;
  switch (q.pattern) {
    case 'read':
      readBytes = read;
      break;
    case 'write':
      readBytes = storeFill;
      writeBytes = written;
      break;
    case 'rmw':
      readBytes = read;
      writeBytes = written;
      break;
    case 'vecmul':
      readBytes = 2 * read + storeFill;
      writeBytes = written;
      break;
  }
  const usefulBytes = accesses * q.elementBytes * ACCESSES_PER_ELEMENT[q.pattern];
  return { accesses, usefulBytes, readBytes, writeBytes, bytesPerUsefulByte: (readBytes + writeBytes) / usefulBytes };
}

/** The line-size model: the same parameters with no fill past one transaction (the paper's P100 column, no prefetch). */
export function lineSizeParameters(p: TrafficParameters): TrafficParameters {
  return { ...p, readFillBytes: p.readTransactionBytes, storeFillBytes: Math.min(p.storeFillBytes, p.readTransactionBytes) };
}

/** The paper's accuracy: 100 − |measured − predicted| / measured × 100 (0 when it would be negative). */
export function accuracyPercent(measured: number, predicted: number): number {
  if (!(measured > 0)) return predicted === 0 ? 100 : 0;
  return Math.max(0, 100 - (Math.abs(measured - predicted) / measured) * 100);
}

/** The predictor's parameters as a served document holds them (the API and the CLI predict from these). */
export function parametersFromDocument(traffic: TrafficTopology): TrafficParameters | null {
  const read = traffic.readTransactionBytes?.value;
  const write = traffic.writeTransactionBytes?.value;
  const fill = traffic.readFillBytes?.value;
  if (read === undefined || write === undefined || fill === undefined) return null;
  return {
    readTransactionBytes: read,
    writeTransactionBytes: write,
    readFillBytes: fill,
    storeFillBytes: traffic.storeFillBytes?.value ?? read,
    storesAllocate: { fresh: traffic.storesAllocate.fresh?.value ?? true, written: traffic.storesAllocate.written?.value ?? true },
    fullSectorStoresRead: traffic.fullSectorStoresRead?.value ?? false,
  };
}
