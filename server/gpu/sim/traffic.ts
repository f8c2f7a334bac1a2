import { ProbeError } from '../../protocol/probe-error.js';
import {
  TRAFFIC_DEFAULT_METRICS,
  TRAFFIC_ELEMENT_BYTES,
  TRAFFIC_METHODS,
  TRAFFIC_PATTERNS,
  TRAFFIC_TARGETS,
  type DeviceProperties,
  type TrafficArgs,
  type TrafficCase,
  type TrafficCaseResult,
  type TrafficResult,
} from '../../protocol/ops.js';
import type { GpuModel } from './model.js';
import type { SimulatedDevice } from './simulated-device.js';
import { MAX_ARRAY_BYTES, MAX_REPETITIONS, RUNTIME_MARGIN_BYTES } from '../../protocol/validate.js';

/**
 * The traffic between the L2 and device memory, as the simulated GPU has it
 * (issue 20). The truth discovery must recover: how many bytes one device
 * memory read and write moves, what a read miss fills, whether a store that
 * covers a sector in part reads it first (for a never-written and a written
 * array), whether whole-sector stores read, and an optional prefetch factor on
 * isolated reads (the paper's Volta-on 1.6×).
 */
export interface TrafficModel {
  readTransactionBytes: number;
  writeTransactionBytes: number;
  /** What one read miss fills by default; cudaLimitMaxL2FetchGranularity clamps it to [readTransactionBytes, lineBytes]. */
  fillBytes: number;
  lineBytes: number;
  /** Partial-sector stores read the sector first (an allocating store), by target. */
  allocatingStores: { fresh: boolean; written: boolean };
  /** Stores that cover whole sectors (contiguous accesses) read them too. */
  fullSectorStoresRead: boolean;
  /** Read bytes of accesses farther apart than the fill unit, over one fill each (1: no prefetch). */
  prefetchFactor: number;
  /** Why counters are unavailable (the probe answers `unsupported` with it); null when CUPTI works. */
  countersUnavailable: string | null;
  /** Relative stdev of a counter reading. */
  counterNoise: number;
}

/** The model's traffic: its `traffic` overrides over what its L2 geometry implies (NVIDIA as the paper found it). */
export function trafficModelOf(model: GpuModel): TrafficModel {
  const sector = model.l2.segment.sectorBytes;
  const line = model.l2.segment.lineBytes;
  return {
    readTransactionBytes: sector,
    writeTransactionBytes: sector,
    fillBytes: Math.min(line, Math.max(sector, model.device.maxL2FetchGranularityBytes)),
    lineBytes: line,
    allocatingStores: { fresh: true, written: true },
    fullSectorStoresRead: false,
    prefetchFactor: 1,
    countersUnavailable: null,
    counterNoise: 0.002,
    ...model.traffic,
  };
}

/** Aligned `blockBytes` blocks holding at least one of `accesses` elements of `elementBytes` spaced `strideBytes` apart. */
export function blocksTouched(accesses: number, elementBytes: number, strideBytes: number, blockBytes: number): number {
  if (accesses <= 0) return 0;
  if (strideBytes >= blockBytes) return accesses;
  return Math.floor(((accesses - 1) * strideBytes + elementBytes - 1) / blockBytes) + 1;
}

export interface TrueTraffic {
  readBytes: number;
  writeBytes: number;
  /** Sectors the L1s asked the L2 for (lts__t_sectors_op_read / _write). */
  l2ReadSectors: number;
  l2WriteSectors: number;
  /** Of readBytes, the fills of partially written sectors (read when the sector is evicted, as an H100 does). */
  storeFillBytes: number;
}

/** The bytes one case moves between the L2 and device memory, noise-free. */
export function trueTraffic(model: TrafficModel, footprintBytes: number, c: Required<TrafficCase>, fetchLimitBytes: number | null): TrueTraffic {
  const accesses = Math.ceil(footprintBytes / c.elementBytes / c.strideElements);
  const stride = c.strideElements * c.elementBytes;
  const sector = model.readTransactionBytes;
  const fill = fetchLimitBytes === null ? model.fillBytes : Math.min(model.lineBytes, Math.max(sector, fetchLimitBytes));
  const filled = blocksTouched(accesses, c.elementBytes, stride, fill) * fill;
  // A prefetch reads more per isolated access, never more than the whole span (fills of the span's every block).
  const span = Math.ceil(((accesses - 1) * stride + c.elementBytes) / fill) * fill;
  const arrayRead = stride >= fill ? Math.min(filled * model.prefetchFactor, span) : filled;
  const sectors = blocksTouched(accesses, c.elementBytes, stride, sector);
  const dirtied = blocksTouched(accesses, c.elementBytes, stride, model.writeTransactionBytes) * model.writeTransactionBytes;
  const whole = stride === c.elementBytes;
  const allocating = whole ? model.fullSectorStoresRead : model.allocatingStores[c.target];
  const storeFill = allocating ? sectors * sector : 0;
  switch (c.pattern) {
    case 'read':
      return { readBytes: arrayRead, writeBytes: 0, l2ReadSectors: sectors, l2WriteSectors: 0, storeFillBytes: 0 };
    case 'write':
      return { readBytes: storeFill, writeBytes: dirtied, l2ReadSectors: 0, l2WriteSectors: sectors, storeFillBytes: storeFill };
    case 'rmw':
      return { readBytes: arrayRead, writeBytes: dirtied, l2ReadSectors: sectors, l2WriteSectors: sectors, storeFillBytes: 0 };
    case 'vecmul':
      return { readBytes: 2 * arrayRead + storeFill, writeBytes: dirtied, l2ReadSectors: 2 * sectors, l2WriteSectors: sectors, storeFillBytes: storeFill };
  }
}

type Limits = Pick<DeviceProperties, 'totalMemoryBytes' | 'l2CacheSizeBytes'>;
export interface ValidTrafficArgs extends Required<Omit<TrafficArgs, 'cases' | 'l2FetchGranularityBytes'>> {
  cases: Array<Required<TrafficCase>>;
  l2FetchGranularityBytes: number | null;
}
export const MAX_TRAFFIC_CASES = 256;
export const MAX_TRAFFIC_METRICS = 16;
export const MAX_TRAFFIC_METRIC_CHARS = 128;
export const DEFAULT_TRAFFIC_REPETITIONS = 3;
/** The flush buffer around every case, in L2 sizes (native/probe/src/limits.h kTrafficFlushL2Multiple). */
export const TRAFFIC_FLUSH_L2_MULTIPLE = 4;
const FETCH_LIMITS = [32, 64, 128];

function bad(message: string): never {
  throw new ProbeError('bad_request', message);
}

function integerIn(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) bad(`${name} must be an integer in [${min}, ${max}], got ${JSON.stringify(value)}`);
  return value;
}

function choice<T extends string>(value: unknown, name: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) bad(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  return value as T;
}

/** traffic's rules (the list at the top of validate.ts; native/probe/src/traffic-op.cpp), defaults filled in. */
export function validateTraffic(raw: unknown, limits: Limits): ValidTrafficArgs {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) bad('args must be an object');
  const source = raw as Record<string, unknown>;
  const method = choice(source['method'], 'method', TRAFFIC_METHODS);
  const footprintBytes = integerIn(source['footprintBytes'], 'footprintBytes', 16, MAX_ARRAY_BYTES);
  if (footprintBytes % 16 !== 0) bad(`footprintBytes must be a multiple of 16, got ${footprintBytes}`);
  const list = source['cases'];
  if (!Array.isArray(list) || list.length < 1 || list.length > MAX_TRAFFIC_CASES) bad(`cases must be an array of 1 to ${MAX_TRAFFIC_CASES} cases`);
  const cases = list.map((entry): Required<TrafficCase> => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) bad('cases must be an array of case objects');
    const c = entry as Record<string, unknown>;
    const pattern = choice(c['pattern'], 'cases[].pattern', TRAFFIC_PATTERNS);
    const elementBytes = integerIn(c['elementBytes'], 'cases[].elementBytes', 4, 16);
    if (!(TRAFFIC_ELEMENT_BYTES as readonly number[]).includes(elementBytes)) bad('cases[].elementBytes must be one of 4, 8, 16');
    const strideElements = integerIn(c['strideElements'], 'cases[].strideElements', 1, Math.floor(footprintBytes / elementBytes));
    const target = c['target'] === undefined ? 'written' : choice(c['target'], 'cases[].target', TRAFFIC_TARGETS);
    return { pattern, elementBytes, strideElements, target };
  });
  const repetitions = source['repetitions'] === undefined ? DEFAULT_TRAFFIC_REPETITIONS : integerIn(source['repetitions'], 'repetitions', 1, MAX_REPETITIONS);
  let metrics: string[] = [...TRAFFIC_DEFAULT_METRICS];
  if (source['metrics'] !== undefined) {
    const names = source['metrics'];
    if (!Array.isArray(names) || names.length < 1 || names.length > MAX_TRAFFIC_METRICS) bad(`metrics must be an array of 1 to ${MAX_TRAFFIC_METRICS} metric names`);
    for (const name of names) {
      if (typeof name !== 'string' || name.length === 0 || name.length > MAX_TRAFFIC_METRIC_CHARS || !/^[a-z0-9_.]+$/.test(name)) {
        bad(`metrics must be metric names of lower-case letters, digits, '_' and '.' (at most ${MAX_TRAFFIC_METRIC_CHARS})`);
      }
    }
    metrics = names as string[];
  }
  let l2FetchGranularityBytes: number | null = null;
  if (source['l2FetchGranularityBytes'] !== undefined) {
    l2FetchGranularityBytes = integerIn(source['l2FetchGranularityBytes'], 'l2FetchGranularityBytes', 32, 128);
    if (!FETCH_LIMITS.includes(l2FetchGranularityBytes)) bad('l2FetchGranularityBytes must be one of 32, 64, 128');
  }
  const need = 3 * footprintBytes + TRAFFIC_FLUSH_L2_MULTIPLE * limits.l2CacheSizeBytes;
  if (need + RUNTIME_MARGIN_BYTES > limits.totalMemoryBytes) {
    throw new ProbeError('out_of_memory', `${need} bytes (plus a ${RUNTIME_MARGIN_BYTES}-byte runtime margin) exceed device memory of ${limits.totalMemoryBytes} bytes`);
  }
  return { method, footprintBytes, cases, repetitions, metrics, l2FetchGranularityBytes };
}

/** The metrics the simulated GPU counts, from a case's true traffic (and the flush kernels' reads). */
const SIM_METRICS: Record<string, (t: TrueTraffic) => number> = {
  'dram__bytes_read.sum': (t) => t.readBytes,
  'dram__bytes_write.sum': (t) => t.writeBytes,
  'lts__t_sectors_op_read.sum': (t) => t.l2ReadSectors,
  'lts__t_sectors_op_write.sum': (t) => t.l2WriteSectors,
};

/**
 * traffic as the native probe runs it (native/probe/src/traffic-op.cpp),
 * from the analytic model rather than walked loads (a sweep touches hundreds
 * of millions of elements). Counters: the flush before reads its buffer and
 * writes back the lines the target's fill left dirty; the pattern's writes
 * that outgrow the L2 are written back during it, the rest by the flush
 * after, which also reads the fills of their partial sectors (an H100 fills
 * a partially written sector when it evicts it).
 * Timing: the launch overhead plus the bytes at the device-memory bandwidths.
 */
export function simulateTraffic(device: SimulatedDevice, properties: DeviceProperties, raw: unknown): TrafficResult {
  const args = validateTraffic(raw, properties);
  const model = trafficModelOf(device.model);
  const flushBytes = TRAFFIC_FLUSH_L2_MULTIPLE * properties.l2CacheSizeBytes;
  const memory = device.model.deviceMemory;
  const l2Bytes = properties.l2CacheSizeBytes;
  if (args.method === 'counters') {
    if (model.countersUnavailable !== null) throw new ProbeError('unsupported', model.countersUnavailable);
    const unknown = args.metrics.find((name) => !Object.hasOwn(SIM_METRICS, name));
    if (unknown !== undefined) bad(`metrics must name metrics this GPU counts (${unknown} is not one)`);
  }
  const fetchLimit = args.l2FetchGranularityBytes ?? device.model.device.maxL2FetchGranularityBytes;
  const noisy = (value: number) => Math.max(0, Math.round(device.jitter(value, model.counterNoise)));
  const flushSeconds = device.model.launchOverheadS + flushBytes / memory.readBandwidthBytesPerS;
  const cases = args.cases.map((c): TrafficCaseResult => {
    const accesses = Math.ceil(args.footprintBytes / c.elementBytes / c.strideElements);
    const truth = trueTraffic(model, args.footprintBytes, c, args.l2FetchGranularityBytes === null ? null : fetchLimit);
    const kernelSeconds = device.model.launchOverheadS + truth.readBytes / memory.readBandwidthBytesPerS + truth.writeBytes / memory.writeBandwidthBytesPerS;
    const result: TrafficCaseResult = { ...c, accesses };
    if (args.method === 'counters') {
      const preparedDirty = c.pattern !== 'read' && c.target === 'written' ? Math.min(args.footprintBytes, l2Bytes) : 0;
      const writtenDuring = Math.max(0, truth.writeBytes - l2Bytes);
      const zero: TrueTraffic = { readBytes: 0, writeBytes: 0, l2ReadSectors: 0, l2WriteSectors: 0, storeFillBytes: 0 };
      // The lines still dirty when the pattern ends are written back, and their partial sectors filled, by the flush after.
      const late = truth.writeBytes > 0 ? (truth.writeBytes - writtenDuring) / truth.writeBytes : 0;
      const lateFill = truth.storeFillBytes * late;
      // A flush reads its whole buffer exactly (an H100 counts it within ~10 kB); the noise is on what the case moved.
      const flushOwn: TrueTraffic = { ...zero, readBytes: flushBytes, l2ReadSectors: flushBytes / model.readTransactionBytes };
      const flush = (dirty: number, fill: number) => args.metrics.map((name) => SIM_METRICS[name]!(flushOwn) + noisy(SIM_METRICS[name]!({ ...zero, writeBytes: dirty, readBytes: fill })));
      const during = args.metrics.map((name) => noisy(SIM_METRICS[name]!({ ...truth, readBytes: truth.readBytes - lateFill, writeBytes: writtenDuring })));
      const [before, after] = [flush(preparedDirty, 0), flush(truth.writeBytes - writtenDuring, lateFill)];
      Object.assign(result, { before, during, after, kernel: `${c.pattern}_kernel` });
      device.addSeconds(2 * flushSeconds + kernelSeconds);
    } else {
      result.secondsPerRepetition = Array.from({ length: args.repetitions }, () => device.timeSliced(Math.max(1e-7, device.jitter(kernelSeconds, 0.01))));
      device.addSeconds((args.repetitions + 1) * (flushSeconds + kernelSeconds));
    }
    return result;
  });
  const out: TrafficResult = { method: args.method, footprintBytes: args.footprintBytes, flushBytes, l2FetchGranularityBytes: fetchLimit, cases };
  if (args.method === 'counters') Object.assign(out, { metrics: args.metrics, passes: 1, library: 'simulated', chip: 'SIM' });
  return out;
}
