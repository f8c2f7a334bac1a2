/**
 * The traffic family's analysis (issue 20), pure: recorded `traffic` results
 * → points (DRAM bytes per case), the predictor's parameters, the curve and
 * the timing method's error against the counters.
 *
 * Counted bytes of a case: what moved while the pattern ran, plus what the
 * flush after it moved for it: the lines it left dirty, written back, and
 * the fills of sectors it wrote in part (read at eviction), past the flush's
 * own reads of its buffer. Timed
 * bytes: the median launch time × the bandwidth the same pattern reached at
 * stride 1 with whole elements, where every model agrees on the bytes (one
 * read of the array, one write, or both).
 */
import { median } from '../../analysis/descriptive.js';
import type { TrafficCaseResult, TrafficResult } from '../../protocol/ops.js';
import type { TrafficMethodName, TrafficPatternName } from '../../model/traffic-schema.js';
import { ACCESSES_PER_ELEMENT, type TrafficParameters } from '../traffic-predict.js';

export interface TrafficPoint {
  method: TrafficMethodName;
  pattern: TrafficPatternName;
  target: 'fresh' | 'written';
  elementBytes: number;
  strideBytes: number;
  accesses: number;
  footprintBytes: number;
  /** The request's cudaLimitMaxL2FetchGranularity; null: the context's default. */
  fetchLimitBytes: number | null;
  /** Counters only (null for timing: a time does not split reads from writes). */
  readBytes: number | null;
  writeBytes: number | null;
  totalBytes: number;
}

/** A stride far enough that every access is isolated: past any fill unit and the line. */
export const ISOLATED_STRIDE_BYTES = 256;

function metricIndex(result: TrafficResult, name: string): number {
  return (result.metrics ?? []).indexOf(name);
}

/** Counted points of one counters result; cases whose counters lack DRAM bytes are left out. */
export function countedPoints(result: TrafficResult, fetchLimitBytes: number | null): TrafficPoint[] {
  const r = metricIndex(result, 'dram__bytes_read.sum');
  const w = metricIndex(result, 'dram__bytes_write.sum');
  if (r < 0 || w < 0) return [];
  return result.cases.flatMap((c) => {
    const during = c.during;
    const after = c.after;
    if (!during || !after) return [];
    // A partially written sector is filled when it is evicted (the H100 reads it then, not at the store): reads
    // the flush after made beyond its own buffer belong to the pattern, as its dirty lines written back do.
    const readBytes = (during[r] ?? 0) + Math.max(0, (after[r] ?? 0) - result.flushBytes);
    const writeBytes = (during[w] ?? 0) + (after[w] ?? 0);
    return [
      { ...pointBase(c, result.footprintBytes, fetchLimitBytes, 'counters'), readBytes, writeBytes, totalBytes: readBytes + writeBytes },
    ];
  });
}

function pointBase(c: TrafficCaseResult, footprintBytes: number, fetchLimitBytes: number | null, method: TrafficMethodName) {
  return {
    method,
    pattern: c.pattern,
    target: c.target,
    elementBytes: c.elementBytes,
    strideBytes: c.strideElements * c.elementBytes,
    accesses: c.accesses,
    footprintBytes,
    fetchLimitBytes,
  };
}

/** The bytes every model agrees on at stride 1 (whole elements, nothing skipped): one array per element access. */
function streamBytes(pattern: TrafficPatternName, footprintBytes: number): number {
  return ACCESSES_PER_ELEMENT[pattern] * footprintBytes;
}

/**
 * The launch cost of the timing runs: time = cost + bytes / bandwidth through
 * the stride-1 reads of two footprints (the same bytes per element under every
 * model); 0 when only one footprint was timed.
 */
export function launchCostSeconds(
  all: ReadonlyArray<{ c: TrafficCaseResult; footprintBytes: number; fetchLimitBytes: number | null }>,
): number {
  const streams = all
    .filter((x) => x.c.pattern === 'read' && x.c.strideElements === 1 && x.fetchLimitBytes === null)
    .map((x) => ({ bytes: x.footprintBytes, seconds: median(x.c.secondsPerRepetition ?? []) }))
    .filter((x) => x.seconds > 0);
  const small = streams.reduce<(typeof streams)[number] | null>((a, b) => (a === null || b.bytes < a.bytes ? b : a), null);
  const big = streams.reduce<(typeof streams)[number] | null>((a, b) => (a === null || b.bytes > a.bytes ? b : a), null);
  if (!small || !big || big.bytes === small.bytes || !(big.seconds > small.seconds)) return 0;
  const secondsPerByte = (big.seconds - small.seconds) / (big.bytes - small.bytes);
  return Math.max(0, small.seconds - small.bytes * secondsPerByte);
}

/**
 * Timed points of the timing results: each case's median time, less the
 * launch cost, × its pattern's stride-1 bandwidth (same footprint; same
 * target and element size when recorded, else the pattern's first stride-1
 * case). Cases without a reference are left out.
 */
export function timedPoints(results: ReadonlyArray<{ result: TrafficResult; fetchLimitBytes: number | null }>): TrafficPoint[] {
  const all = results.flatMap(({ result, fetchLimitBytes }) =>
    result.cases.map((c) => ({ c, footprintBytes: result.footprintBytes, fetchLimitBytes })),
  );
  const cost = launchCostSeconds(all);
  const seconds = (c: TrafficCaseResult) => Math.max(0, median(c.secondsPerRepetition ?? []) - cost);
  const reference = (c: TrafficCaseResult, footprintBytes: number) => {
    const streams = all.filter(
      (x) => x.c.pattern === c.pattern && x.c.strideElements === 1 && x.footprintBytes === footprintBytes && x.fetchLimitBytes === null,
    );
    const best = streams.find((x) => x.c.target === c.target && x.c.elementBytes === c.elementBytes) ?? streams[0];
    if (!best || !(seconds(best.c) > 0)) return null;
    return streamBytes(c.pattern, footprintBytes) / seconds(best.c);
  };
  return all.flatMap(({ c, footprintBytes, fetchLimitBytes }) => {
    const bytesPerS = reference(c, footprintBytes);
    const t = seconds(c);
    if (bytesPerS === null || !(t > 0)) return [];
    return [{ ...pointBase(c, footprintBytes, fetchLimitBytes, 'timing'), readBytes: null, writeBytes: null, totalBytes: t * bytesPerS }];
  });
}

/** 2^round(log2 x) biased down a little, so a prefetch factor up to ~1.6 over a transaction reads as that transaction. */
export function transactionBytes(perAccessBytes: number): number {
  return 2 ** Math.floor(Math.log2(perAccessBytes) + 0.15);
}

/** 1 − the relative spread (median absolute deviation / median), within [0.3, 0.99]. */
function agreement(values: readonly number[]): number {
  const m = median(values);
  if (!(m > 0)) return 0.3;
  const spread = median(values.map((v) => Math.abs(v - m))) / m;
  return Math.min(0.99, Math.max(0.3, 1 - 4 * spread));
}

export interface Estimate {
  value: number;
  confidence: number;
  points: number;
}

export interface Flag {
  value: boolean;
  confidence: number;
  /** The measured read bytes over the span's bytes (≈ 1: every sector read; ≈ 0: none). */
  readShare: number;
}

export interface FittedTraffic {
  method: TrafficMethodName;
  readTransaction: Estimate | null;
  writeTransaction: Estimate | null;
  readFill: Estimate | null;
  storeFill: Estimate | null;
  storesAllocate: { fresh: Flag | null; written: Flag | null };
  fullSectorStoresRead: Flag | null;
  warnings: string[];
}

function estimate(values: readonly number[], scale = 1): Estimate | null {
  if (values.length === 0) return null;
  return { value: median(values), confidence: agreement(values) * scale, points: values.length };
}

const isolated = (p: TrafficPoint) => p.strideBytes >= ISOLATED_STRIDE_BYTES && p.strideBytes >= 2 * p.elementBytes;

/** A store pattern's read share at a stride: reads over the bytes the span holds (counters), or over the stride-1 write (timing). */
function flagFrom(shares: readonly number[], scale: number): Flag | null {
  if (shares.length === 0) return null;
  const share = median(shares);
  const value = share > 0.5;
  // Sure when the share sits at 0 or 1; unsure midway.
  const confidence = Math.max(0.3, Math.min(0.99, (1 - 2 * Math.min(Math.abs(share), Math.abs(1 - share))) * scale));
  return { value, confidence, readShare: share };
}

/**
 * The predictor's parameters from counted points (preferred) or timed ones.
 * - read transaction: isolated reads under the smallest fetch limit recorded;
 * - read fill: isolated reads under the default limit (includes any prefetch);
 * - write transaction: isolated writes' write bytes per access (counters);
 * - allocating stores: a store every other element (partial sectors, dense)
 *   reads about every sector of its span, or nothing;
 * - whole-sector stores: the same at stride 1.
 */
export function fitTraffic(points: readonly TrafficPoint[]): FittedTraffic {
  const counted = points.filter((p) => p.method === 'counters');
  const method: TrafficMethodName = counted.length > 0 ? 'counters' : 'timing';
  const use = method === 'counters' ? counted : points.filter((p) => p.method === 'timing');
  const scale = method === 'counters' ? 1 : 0.6;
  const warnings: string[] = [];
  const perAccess = (p: TrafficPoint, bytes: number) => bytes / p.accesses;
  const readsOf = (p: TrafficPoint) => p.readBytes ?? p.totalBytes;

  const isolatedReads = use.filter((p) => p.pattern === 'read' && isolated(p));
  const defaultReads = isolatedReads.filter((p) => p.fetchLimitBytes === null).map((p) => perAccess(p, readsOf(p)));
  const limits = isolatedReads.map((p) => p.fetchLimitBytes).filter((x): x is number => x !== null);
  const smallest = limits.length > 0 ? Math.min(...limits) : null;
  const smallestReads =
    smallest === null ? defaultReads : isolatedReads.filter((p) => p.fetchLimitBytes === smallest).map((p) => perAccess(p, readsOf(p)));
  const readFill = estimate(defaultReads, scale);
  const readPerAccess = estimate(smallestReads.length > 0 ? smallestReads : defaultReads, scale);
  const readTransaction = readPerAccess ? { ...readPerAccess, value: transactionBytes(readPerAccess.value) } : null;
  if (!readFill) warnings.push('no isolated reads recorded: the read fill and the prefetch factor are unknown');

  const dense = (p: TrafficPoint, strideElements: number) =>
    p.pattern === 'write' && p.strideBytes === strideElements * p.elementBytes && p.fetchLimitBytes === null;
  const spanOf = (p: TrafficPoint) => (p.accesses - 1) * p.strideBytes + p.elementBytes;
  let storesAllocate: FittedTraffic['storesAllocate'];
  let fullSectorStoresRead: Flag | null;
  let writeTransaction: Estimate | null;
  let storeFill: Estimate | null = null;
  if (method === 'counters') {
    const share = (p: TrafficPoint) => (p.readBytes ?? 0) / spanOf(p);
    storesAllocate = {
      fresh: flagFrom(use.filter((p) => dense(p, 2) && p.target === 'fresh').map(share), scale),
      written: flagFrom(use.filter((p) => dense(p, 2) && p.target === 'written').map(share), scale),
    };
    fullSectorStoresRead = flagFrom(use.filter((p) => dense(p, 1)).map(share), scale);
    const isolatedWrites = use.filter((p) => p.pattern === 'write' && isolated(p) && p.fetchLimitBytes === null);
    const writes = estimate(
      isolatedWrites.map((p) => perAccess(p, p.writeBytes ?? 0)),
      scale,
    );
    writeTransaction = writes ? { ...writes, value: transactionBytes(writes.value) } : null;
    storeFill = estimate(
      isolatedWrites
        .filter((p) => (p.readBytes ?? 0) > (0.25 * spanOf(p)) / (p.strideBytes / p.elementBytes))
        .map((p) => perAccess(p, p.readBytes ?? 0)),
      scale,
    );
  } else {
    // A time does not split reads from writes: a dense partial-sector store that also reads takes about twice the stride-1 store.
    const streamTime = (target: string) => use.find((p) => dense(p, 1) && p.target === target)?.totalBytes ?? null;
    const ratio = (target: 'fresh' | 'written') => {
      const base = streamTime(target);
      const half = use.filter((p) => dense(p, 2) && p.target === target);
      return base && half.length > 0 ? half.map((p) => p.totalBytes / base - 1) : [];
    };
    storesAllocate = { fresh: flagFrom(ratio('fresh'), scale), written: flagFrom(ratio('written'), scale) };
    fullSectorStoresRead = null;
    const isolatedWrites = use.filter((p) => p.pattern === 'write' && isolated(p) && p.fetchLimitBytes === null);
    const allocating = storesAllocate.written?.value ?? storesAllocate.fresh?.value ?? false;
    const readUnit = readTransaction?.value ?? 0;
    const writes = estimate(
      isolatedWrites.map((p) => perAccess(p, p.totalBytes) - (allocating ? readUnit : 0)).filter((x) => x > 0),
      scale,
    );
    writeTransaction = writes ? { ...writes, value: transactionBytes(writes.value) } : null;
    warnings.push('timing only: write transactions and store fills are inferred from times (reads and writes are not told apart)');
  }
  return { method, readTransaction, writeTransaction, readFill, storeFill, storesAllocate, fullSectorStoresRead, warnings };
}

/** The predictor's parameters from a fit; null when a value it needs is missing. */
export function parametersOf(fit: FittedTraffic): TrafficParameters | null {
  if (!fit.readTransaction || !fit.writeTransaction || !fit.readFill) return null;
  return {
    readTransactionBytes: fit.readTransaction.value,
    writeTransactionBytes: fit.writeTransaction.value,
    readFillBytes: fit.readFill.value,
    storeFillBytes: fit.storeFill?.value ?? fit.readTransaction.value,
    storesAllocate: { fresh: fit.storesAllocate.fresh?.value ?? true, written: fit.storesAllocate.written?.value ?? true },
    fullSectorStoresRead: fit.fullSectorStoresRead?.value ?? false,
  };
}
