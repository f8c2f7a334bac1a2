/**
 * The traffic part of the fit advice (issue 20; built by
 * server/faces/fit-traffic.ts): what the access a fit request describes costs
 * in device-memory traffic and bandwidth, with every number used.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from './schema-helpers.js';
import { TRAFFIC_METHOD_NAMES, TRAFFIC_PATTERN_NAMES, TRAFFIC_TARGET_NAMES } from './traffic-schema.js';
import { VALUE_SOURCES } from './value-schema.js';

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
