import { TRAFFIC_FLUSH_L2_MULTIPLE } from '../../protocol/limits.js';
import type { DeviceProperties, TrafficCase, TrafficCaseResult, TrafficResult } from '../../protocol/ops.js';
import { ProbeError } from '../../protocol/probe-error.js';
import { validateTraffic } from '../../protocol/validate-traffic.js';
import type { GpuModel, TrafficModel } from './model.js';
import type { SimulatedDevice } from './simulated-device.js';

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
export function trueTraffic(
  model: TrafficModel,
  footprintBytes: number,
  c: Required<TrafficCase>,
  fetchLimitBytes: number | null,
): TrueTraffic {
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
      return {
        readBytes: 2 * arrayRead + storeFill,
        writeBytes: dirtied,
        l2ReadSectors: 2 * sectors,
        l2WriteSectors: sectors,
        storeFillBytes: storeFill,
      };
  }
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
    if (unknown !== undefined) throw new ProbeError('bad_request', `metrics must name metrics this GPU counts (${unknown} is not one)`);
  }
  const fetchLimit = args.l2FetchGranularityBytes ?? device.model.device.maxL2FetchGranularityBytes;
  const noisy = (value: number) => Math.max(0, Math.round(device.jitter(value, model.counterNoise)));
  const flushSeconds = device.model.launchOverheadS + flushBytes / memory.readBandwidthBytesPerS;
  const cases = args.cases.map((c): TrafficCaseResult => {
    const accesses = Math.ceil(args.footprintBytes / c.elementBytes / c.strideElements);
    const truth = trueTraffic(model, args.footprintBytes, c, args.l2FetchGranularityBytes === null ? null : fetchLimit);
    const kernelSeconds =
      device.model.launchOverheadS + truth.readBytes / memory.readBandwidthBytesPerS + truth.writeBytes / memory.writeBandwidthBytesPerS;
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
      const flush = (dirty: number, fill: number) =>
        args.metrics.map(
          (name) => SIM_METRICS[name]!(flushOwn) + noisy(SIM_METRICS[name]!({ ...zero, writeBytes: dirty, readBytes: fill })),
        );
      const during = args.metrics.map((name) =>
        noisy(SIM_METRICS[name]!({ ...truth, readBytes: truth.readBytes - lateFill, writeBytes: writtenDuring })),
      );
      const [before, after] = [flush(preparedDirty, 0), flush(truth.writeBytes - writtenDuring, lateFill)];
      Object.assign(result, { before, during, after, kernel: `${c.pattern}_kernel` });
      device.addSeconds(2 * flushSeconds + kernelSeconds);
    } else {
      result.secondsPerRepetition = Array.from({ length: args.repetitions }, () =>
        device.timeSliced(Math.max(1e-7, device.jitter(kernelSeconds, 0.01))),
      );
      device.addSeconds((args.repetitions + 1) * (flushSeconds + kernelSeconds));
    }
    return result;
  });
  const out: TrafficResult = {
    method: args.method,
    footprintBytes: args.footprintBytes,
    flushBytes,
    l2FetchGranularityBytes: fetchLimit,
    cases,
  };
  if (args.method === 'counters') Object.assign(out, { metrics: args.metrics, passes: 1, library: 'simulated', chip: 'SIM' });
  return out;
}
