/**
 * The traffic part of the fit advice (issue 20): for the access a fit request
 * describes, the device-memory bytes one pass over the working set moves per
 * useful byte (the traffic predictor over the GPU's measured L2 ↔ device-memory
 * traffic) and the useful bandwidth that leaves of the measured device-memory
 * bandwidth: measured bandwidth / amplification. Pure, with every number used.
 */
import {
  ACCESSES_PER_ELEMENT,
  curveCorrections,
  parametersFromDocument,
  predictWithCurve,
  type TrafficQuery,
} from '../discovery/traffic-predict.js';
import type { GpuTopologyDocument, MeasuredValue } from '../model/document.js';
import type { FitTraffic } from '../model/fit-traffic-schema.js';
import type { TrafficValue } from '../model/traffic-schema.js';
import { formatBandwidth } from './documents.js';

/** The access a fit request describes; the working set is the bytes it spans. */
export type FitAccess = Omit<TrafficQuery, 'footprintBytes'>;

const PATTERN_WORDS: Record<FitAccess['pattern'], string> = {
  read: 'A read',
  write: 'A write',
  rmw: 'A read-modify-write',
  vecmul: 'A vecMul (two reads, one write)',
};
const NOTE =
  'one pass over the working set from a cold L2; later passes over a working set that stays in L2 (latency class l2-hit or l2-far) move far less. The bandwidth is the whole GPU’s, as measured';

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const bandwidthUsed = (v: MeasuredValue | undefined): FitTraffic['deviceMemoryBandwidth']['read'] =>
  v && v.value > 0 ? { value: v.value, source: v.source, confidence: v.confidence ?? null } : null;
const trafficUsed = (v: TrafficValue) => ({ value: v.value, source: 'microbenchmark' as const, method: v.method });

/** The traffic advice for `access` over `workingSetBytes` (`access.strideBytes` ≥ `access.elementBytes`: the route checks). */
export function fitTraffic(document: GpuTopologyDocument, workingSetBytes: number, access: FitAccess): FitTraffic {
  const q: TrafficQuery = { ...access, footprintBytes: workingSetBytes };
  const memory = document.elements.deviceMemory;
  const read = bandwidthUsed(memory?.readBandwidth);
  const write = bandwidthUsed(memory?.writeBandwidth);
  const traffic = document.traffic;
  const parameters = traffic ? parametersFromDocument(traffic) : null;
  const words = `${PATTERN_WORDS[access.pattern]} of ${access.elementBytes} B every ${access.strideBytes} B`;
  const echo = { ...access, footprintBytes: workingSetBytes };
  if (!traffic || !parameters) {
    const accesses = Math.ceil(workingSetBytes / access.strideBytes);
    return {
      access: echo,
      measured: false,
      method: null,
      accesses,
      usefulBytes: accesses * access.elementBytes * ACCESSES_PER_ELEMENT[access.pattern],
      dramReadBytes: null,
      dramWriteBytes: null,
      dramBytesPerUsefulByte: null,
      used: null,
      deviceMemoryBandwidth: { read, write, bytesPerS: null },
      effectiveBandwidthBytesPerS: null,
      summary: `This GPU’s L2 ↔ device-memory traffic was not measured${traffic ? ' (too few points for the predictor)' : ''}: probe it with {"only":["traffic"]} (POST /v1/gpus/${document.gpu.uuid}/probe) to predict what ${words.charAt(0).toLowerCase()}${words.slice(1)} moves.`,
      note: NOTE,
    };
  }
  const corrections = curveCorrections(parameters, traffic.curve);
  const predicted = predictWithCurve(parameters, corrections, q);
  // Seconds per byte of each direction; a direction the pass does not use needs no bandwidth.
  const readSeconds = predicted.readBytes === 0 ? 0 : read ? predicted.readBytes / read.value : null;
  const writeSeconds = predicted.writeBytes === 0 ? 0 : write ? predicted.writeBytes / write.value : null;
  const seconds = readSeconds === null || writeSeconds === null ? null : readSeconds + writeSeconds;
  const moved = predicted.readBytes + predicted.writeBytes;
  const bytesPerS = seconds === null || !(seconds > 0) ? null : moved / seconds;
  const effective = bytesPerS === null || !(predicted.bytesPerUsefulByte > 0) ? null : bytesPerS / predicted.bytesPerUsefulByte;
  const allocating = traffic.storesAllocate[access.target];
  const amplification = `${round3(predicted.bytesPerUsefulByte)} device-memory bytes per useful byte (${traffic.method})`;
  return {
    access: echo,
    measured: true,
    method: traffic.method,
    accesses: predicted.accesses,
    usefulBytes: predicted.usefulBytes,
    dramReadBytes: Math.round(predicted.readBytes),
    dramWriteBytes: Math.round(predicted.writeBytes),
    dramBytesPerUsefulByte: round3(predicted.bytesPerUsefulByte),
    used: {
      readTransactionBytes: trafficUsed(traffic.readTransactionBytes!),
      writeTransactionBytes: trafficUsed(traffic.writeTransactionBytes!),
      readFillBytes: trafficUsed(traffic.readFillBytes!),
      storeFillBytes: trafficUsed(traffic.storeFillBytes ?? traffic.readTransactionBytes!),
      storesAllocate: allocating
        ? { value: allocating.value, source: 'microbenchmark', method: allocating.method }
        : { value: parameters.storesAllocate[access.target], source: 'assumed', method: null },
      curveFactor: corrections.some((c) => c.pattern === access.pattern)
        ? { value: round3(predicted.curveFactor), source: 'microbenchmark', method: traffic.method }
        : { value: 1, source: 'none', method: null },
    },
    deviceMemoryBandwidth: { read, write, bytesPerS: bytesPerS === null ? null : Math.round(bytesPerS) },
    effectiveBandwidthBytesPerS: effective === null ? null : Math.round(effective),
    summary:
      effective === null || bytesPerS === null
        ? `${words} moves ${amplification}; the device-memory bandwidth it needs was not measured, so no effective bandwidth.`
        : `${words} moves ${amplification}: about ${formatBandwidth(effective)} of useful bandwidth from the ${formatBandwidth(bytesPerS)} device memory moves.`,
    note: NOTE,
  };
}
