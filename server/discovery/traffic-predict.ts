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

/** One measured point of the curve, as the predictor reads it: what a pass moved against what the parameters predict. */
export interface CurveCorrection {
  pattern: TrafficPatternName;
  target: 'fresh' | 'written';
  elementBytes: number;
  strideBytes: number;
  /** Measured bytes over the parametric prediction at this stride. */
  factor: number;
}

/**
 * The measured curve's departures from the parametric model, per pattern,
 * target and stride (the paper's Table II is such a table: per-stride
 * factors). Where the model is exact the factors are 1; where the GPU does
 * something it does not model (an H100's read-modify-write reads more than
 * one fill at middle strides) they carry the measurement.
 */
export function curveCorrections(parameters: TrafficParameters, curve: TrafficTopology['curve']): CurveCorrection[] {
  return curve.flatMap((p) => {
    const footprintBytes = p.accesses * p.strideBytes;
    const model = predictTraffic(parameters, {
      pattern: p.pattern,
      strideBytes: p.strideBytes,
      elementBytes: p.elementBytes,
      footprintBytes,
      target: p.target,
    });
    const modelled = model.readBytes + model.writeBytes;
    const measured = p.dramReadBytes + p.dramWriteBytes;
    return modelled > 0 && measured > 0
      ? [{ pattern: p.pattern, target: p.target, elementBytes: p.elementBytes, strideBytes: p.strideBytes, factor: measured / modelled }]
      : [];
  });
}

/**
 * The factor at a query's stride: interpolated in log2(stride) between the
 * nearest measured strides of its pattern (its target and element size
 * first, where measured), the end one past them; 1 without any.
 */
export function correctionAt(
  corrections: readonly CurveCorrection[],
  q: Pick<TrafficQuery, 'pattern' | 'target' | 'strideBytes' | 'elementBytes'>,
): number {
  const narrow = (list: CurveCorrection[], keep: (c: CurveCorrection) => boolean) => (list.some(keep) ? list.filter(keep) : list);
  const ofPattern = corrections.filter((c) => c.pattern === q.pattern);
  const points = narrow(
    narrow(ofPattern, (c) => c.target === q.target),
    (c) => c.elementBytes === q.elementBytes,
  )
    .slice()
    .sort((a, b) => a.strideBytes - b.strideBytes);
  if (points.length === 0) return 1;
  // Several points at one stride (footprints, repeats): their mean.
  const byStride = [...new Map(points.map((p) => [p.strideBytes, points.filter((x) => x.strideBytes === p.strideBytes)])).entries()].map(
    ([strideBytes, same]) => ({
      strideBytes,
      factor: same.reduce((s, x) => s + x.factor, 0) / same.length,
    }),
  );
  const first = byStride[0]!;
  const last = byStride[byStride.length - 1]!;
  if (q.strideBytes <= first.strideBytes) return first.factor;
  if (q.strideBytes >= last.strideBytes) return last.factor;
  const upper = byStride.findIndex((p) => p.strideBytes >= q.strideBytes);
  const a = byStride[upper - 1]!;
  const b = byStride[upper]!;
  const t = (Math.log2(q.strideBytes) - Math.log2(a.strideBytes)) / (Math.log2(b.strideBytes) - Math.log2(a.strideBytes));
  return a.factor + t * (b.factor - a.factor);
}

/** The prediction with the measured curve's factor at the query's stride (reads and writes scaled alike). */
export function predictWithCurve(
  parameters: TrafficParameters,
  corrections: readonly CurveCorrection[],
  q: TrafficQuery,
): TrafficPrediction & { curveFactor: number } {
  const base = predictTraffic(parameters, q);
  const curveFactor = correctionAt(corrections, q);
  const readBytes = base.readBytes * curveFactor;
  const writeBytes = base.writeBytes * curveFactor;
  return { ...base, readBytes, writeBytes, bytesPerUsefulByte: (readBytes + writeBytes) / base.usefulBytes, curveFactor };
}
