/**
 * The traffic part of the fit advice (issue 20): for the access a fit request
 * describes, the device-memory bytes one pass over the working set moves per
 * useful byte (the traffic predictor over the GPU's measured L2 ↔ device-memory
 * traffic) and the useful bandwidth that leaves of the measured device-memory
 * bandwidth: measured bandwidth / amplification. Pure, with every number used.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  ACCESSES_PER_ELEMENT,
  curveCorrections,
  parametersFromDocument,
  predictWithCurve,
  type TrafficQuery,
} from '../discovery/traffic-predict.js';
import type { GpuTopologyDocument, MeasuredValue } from '../model/document.js';
import { Nullable, StringEnum } from '../model/schema-helpers.js';
import { TRAFFIC_METHOD_NAMES, TRAFFIC_PATTERN_NAMES, TRAFFIC_TARGET_NAMES, type TrafficValue } from '../model/traffic-schema.js';
import { VALUE_SOURCES } from '../model/value-schema.js';
import { formatBandwidth } from './documents.js';

/** The access a fit request describes; the working set is the bytes it spans. */
export type FitAccess = Omit<TrafficQuery, 'footprintBytes'>;

const TrafficNumberUsedSchema = Type.Object(
  { value: Type.Number(), source: StringEnum(['microbenchmark', 'none'] as const), method: Nullable(StringEnum(TRAFFIC_METHOD_NAMES)) },
  { additionalProperties: false },
);
const BandwidthUsedSchema = Type.Object(
  {
    value: Type.Number({ minimum: 0, description: 'bytes/s' }),
    source: StringEnum(VALUE_SOURCES),
    confidence: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false },
);

export const FitTrafficSchema = Type.Object(
  {
    access: Type.Object(
      {
        pattern: StringEnum(TRAFFIC_PATTERN_NAMES),
        target: StringEnum(TRAFFIC_TARGET_NAMES),
        strideBytes: Type.Integer({ minimum: 1 }),
        elementBytes: Type.Integer({ minimum: 1 }),
        footprintBytes: Type.Integer({ minimum: 1, description: 'the working set: the bytes the access spans' }),
      },
      { additionalProperties: false, description: 'the access the request described, defaults filled in' },
    ),
    measured: Type.Boolean({
      description:
        'whether this GPU’s L2 ↔ device-memory traffic was measured (opt-in: a probe with only ["traffic"]); false: no prediction',
    }),
    method: Nullable(StringEnum(TRAFFIC_METHOD_NAMES), {
      description: 'how the traffic was measured (hardware counters or timing); null when it was not',
    }),
    accesses: Type.Integer({ minimum: 0 }),
    usefulBytes: Type.Number({ minimum: 0, description: 'bytes one pass asks for (rmw 2, vecmul 3 elements per access)' }),
    dramReadBytes: Nullable(Type.Number({ minimum: 0 }), { description: 'predicted device-memory reads of one pass from a cold L2' }),
    dramWriteBytes: Nullable(Type.Number({ minimum: 0 }), { description: 'predicted device-memory writes of one pass' }),
    dramBytesPerUsefulByte: Nullable(Type.Number({ minimum: 0 }), {
      description: 'predicted device-memory bytes per useful byte (the amplification); null without a traffic measurement',
    }),
    used: Nullable(
      Type.Object(
        {
          readTransactionBytes: TrafficNumberUsedSchema,
          writeTransactionBytes: TrafficNumberUsedSchema,
          readFillBytes: TrafficNumberUsedSchema,
          storeFillBytes: TrafficNumberUsedSchema,
          storesAllocate: Type.Object(
            {
              value: Type.Boolean(),
              source: StringEnum(['microbenchmark', 'assumed'] as const),
              method: Nullable(StringEnum(TRAFFIC_METHOD_NAMES)),
            },
            { additionalProperties: false, description: 'whether a partial-sector store to this target reads the sector first' },
          ),
          curveFactor: TrafficNumberUsedSchema,
        },
        {
          additionalProperties: false,
          description: 'the measured traffic numbers the prediction used (as GET /v1/gpus/{id}/traffic names them)',
        },
      ),
      { description: 'null without a traffic measurement' },
    ),
    deviceMemoryBandwidth: Type.Object(
      {
        read: Nullable(BandwidthUsedSchema, { description: 'the measured device-memory read bandwidth; null when not measured' }),
        write: Nullable(BandwidthUsedSchema, { description: 'the measured device-memory write bandwidth; null when not measured' }),
        bytesPerS: Nullable(Type.Number({ minimum: 0 }), {
          description:
            'the rate device memory moves this pass’s mix: (reads + writes) / (reads / read bandwidth + writes / write bandwidth); null when a bandwidth it needs was not measured',
        }),
      },
      { additionalProperties: false },
    ),
    effectiveBandwidthBytesPerS: Nullable(Type.Number({ minimum: 0 }), {
      description:
        'useful bytes per second: deviceMemoryBandwidth.bytesPerS / dramBytesPerUsefulByte; null without the traffic or the bandwidth',
    }),
    summary: Type.String({ description: 'the traffic advice in one sentence' }),
    note: Type.String(),
  },
  {
    additionalProperties: false,
    description: 'what the described access costs in device-memory traffic and bandwidth, with the numbers used',
  },
);
export type FitTraffic = Static<typeof FitTrafficSchema>;

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
