/**
 * GET /v1/gpus/{id}/traffic (issue 20): the query that describes one strided
 * access, and the predicted L2 ↔ device-memory bytes with the measured
 * numbers used (built by server/api/traffic.ts). The fit advice's query
 * takes the same access fields.
 */
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './schema-helpers.js';
import { TRAFFIC_METHOD_NAMES, TRAFFIC_PATTERN_NAMES, TRAFFIC_TARGET_NAMES } from './traffic-schema.js';

/** 2^53 − 1: the largest byte count a JSON number carries exactly. */
const MAX_BYTES = Number.MAX_SAFE_INTEGER;
/** The widest element one access may move (a 128-byte vector load is already past every GPU's). */
const MAX_ELEMENT_BYTES = 128;

export const TrafficQuerySchema = Type.Object(
  {
    strideBytes: Type.Integer({ minimum: 1, maximum: MAX_BYTES, description: 'bytes from one access to the next (≥ elementBytes)' }),
    elementBytes: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_ELEMENT_BYTES, description: 'bytes one access moves (default 4)' }),
    ),
    footprintBytes: Type.Integer({ minimum: 1, maximum: MAX_BYTES, description: 'bytes the array spans' }),
    pattern: Type.Optional(
      StringEnum(TRAFFIC_PATTERN_NAMES, {
        description: 'read (default), write, rmw (read-modify-write), vecmul (c = a × b: two arrays read, one written)',
      }),
    ),
    target: Type.Optional(
      StringEnum(TRAFFIC_TARGET_NAMES, { description: 'the written array: written before (default) or fresh (never written)' }),
    ),
  },
  { additionalProperties: false },
);
export type TrafficQueryString = Static<typeof TrafficQuerySchema>;

const Used = (description: string) =>
  Type.Object(
    { value: Type.Number(), source: Type.Literal('microbenchmark'), method: StringEnum(TRAFFIC_METHOD_NAMES) },
    { additionalProperties: false, description },
  );
const UsedFlag = (description: string) =>
  Type.Object(
    {
      value: Type.Boolean(),
      source: StringEnum(['microbenchmark', 'assumed'] as const),
      method: Type.Union([StringEnum(TRAFFIC_METHOD_NAMES), Type.Null()]),
    },
    { additionalProperties: false, description },
  );

export const TrafficPredictionSchema = Type.Object(
  {
    gpuUuid: Type.String(),
    query: Type.Object(
      {
        pattern: StringEnum(TRAFFIC_PATTERN_NAMES),
        target: StringEnum(TRAFFIC_TARGET_NAMES),
        strideBytes: Type.Integer(),
        elementBytes: Type.Integer(),
        footprintBytes: Type.Integer(),
      },
      { additionalProperties: false },
    ),
    accesses: Type.Integer({ minimum: 0 }),
    usefulBytes: Type.Number({ minimum: 0, description: 'bytes the accesses ask for (rmw 2, vecmul 3 elements per access)' }),
    dramReadBytes: Type.Number({ minimum: 0 }),
    dramWriteBytes: Type.Number({ minimum: 0 }),
    bytesPerUsefulByte: Type.Number({ minimum: 0, description: 'predicted device-memory bytes per useful byte' }),
    modelBytesPerUsefulByte: Type.Number({ minimum: 0, description: 'the parametric model alone, before the measured curve’s factor' }),
    lineModelBytesPerUsefulByte: Type.Number({
      minimum: 0,
      description: 'the same by the line-size model (one transaction per touched sector, no prefetch)',
    }),
    used: Type.Object(
      {
        readTransactionBytes: Used('the unit device memory reads in'),
        writeTransactionBytes: Used('the unit device memory writes in'),
        readFillBytes: Used('bytes an isolated read moves'),
        storeFillBytes: Used('bytes an allocating store reads per sector it dirties (the read transaction when not measured)'),
        storesAllocate: Type.Object(
          { fresh: UsedFlag('fresh arrays'), written: UsedFlag('written arrays') },
          { additionalProperties: false },
        ),
        fullSectorStoresRead: UsedFlag('whole-sector stores read too'),
        curveFactor: Type.Object(
          {
            value: Type.Number({ minimum: 0 }),
            source: StringEnum(['microbenchmark', 'none'] as const),
            method: Type.Union([StringEnum(TRAFFIC_METHOD_NAMES), Type.Null()]),
          },
          {
            additionalProperties: false,
            description:
              'measured bytes over the model at this stride, from the served curve of the same pattern (interpolated in log2 stride; the end value past it); 1 with source none when the curve has no such pattern',
          },
        ),
      },
      { additionalProperties: false, description: 'the measured numbers the prediction used, with their source and method' },
    ),
    measuredAt: Type.String({ description: 'when the traffic was measured (the probe’s start)' }),
    note: Type.String(),
  },
  { additionalProperties: false, description: 'predicted L2 ↔ device-memory bytes for one strided pattern, with the numbers used' },
);
export type TrafficPrediction = Static<typeof TrafficPredictionSchema>;
