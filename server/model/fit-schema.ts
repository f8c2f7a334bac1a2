/**
 * GET /v1/gpus/{id}/fit: which MIG GPU-instance profiles keep a working set
 * in L2, with the numbers used (built by server/faces/fit.ts), and, for a
 * described access, its device-memory traffic (./fit-traffic-schema.ts);
 * and the query that asks for it.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { FitTrafficSchema } from './fit-traffic-schema.js';
import { TrafficQuerySchema } from './traffic-prediction-schema.js';

const Nullable = <T extends TSchema>(schema: T, description: string) => Type.Union([schema, Type.Null()], { description });

export const LATENCY_CLASSES = ['l2-hit', 'l2-far', 'device-memory', 'unknown'] as const;
export type LatencyClass = (typeof LATENCY_CLASSES)[number];

const LatencyUsedSchema = Type.Object(
  {
    element: Type.String({ description: 'the element whose measured latency this is (l2, deviceMemory)' }),
    meanCycles: Type.Number(),
    meanNs: Type.Union([Type.Number(), Type.Null()], { description: 'null when the SM clock was not measured' }),
  },
  { additionalProperties: false },
);

export const FitProfileSchema = Type.Object(
  {
    profileId: Type.Integer({ minimum: 0, description: 'NVML GPU-instance profile id' }),
    name: Type.String({ description: 'as NVML names it, e.g. "MIG 3g.40gb"; "whole GPU" without MIG' }),
    multiprocessorCount: Type.Integer({ minimum: 0 }),
    memorySizeBytes: Type.Integer({ minimum: 0 }),
    l2ShareBytes: Nullable(Type.Number({ minimum: 0 }), 'the L2 an instance of this profile owns; null when the L2 size is unknown'),
    reachablePerSmBytes: Nullable(
      Type.Number({ minimum: 0 }),
      'min(share, measured L2 segment): the L2 one SM reaches; null without a measured segment',
    ),
    fitsInL2Share: Type.Union([Type.Boolean(), Type.Null()], { description: 'working set ≤ the L2 share; null when the share is unknown' }),
    fitsInReachableL2: Type.Union([Type.Boolean(), Type.Null()], {
      description: 'working set ≤ what one SM reaches; null without a measured segment',
    }),
    fitsInMemory: Type.Boolean({ description: 'working set ≤ the instance’s device memory' }),
    latencyClass: Type.Unsafe<LatencyClass>({
      type: 'string',
      enum: [...LATENCY_CLASSES],
      description:
        'l2-hit: fits what one SM reaches (the near L2 segment); l2-far: fits the share but not one segment (hits pay the far-segment crossing); device-memory: larger than the share; unknown: no L2 size',
    }),
    expectedLatency: Type.Union([LatencyUsedSchema, Type.Null()], {
      description: 'the measured latency of that class; null when it was not measured',
    }),
  },
  { additionalProperties: false },
);

export const FitAdviceSchema = Type.Object(
  {
    gpuUuid: Type.String(),
    gpuName: Type.String(),
    workingSetBytes: Type.Integer({ minimum: 1 }),
    simulated: Type.Boolean(),
    basis: Type.Object(
      {
        l2SizeBytes: Nullable(Type.Number({ minimum: 0 }), 'the L2 size the shares divide (measured, else the runtime’s)'),
        l2SizeSource: Type.Union([Type.String(), Type.Null()], { description: 'where the L2 size came from (microbenchmark, api, …)' }),
        l2SegmentBytes: Nullable(Type.Number({ minimum: 0 }), 'the measured L2 segment (partition)'),
        memorySliceCount: Nullable(Type.Integer({ minimum: 0 }), 'the GPU’s memory slices (NVML)'),
        l2Latency: Type.Union([LatencyUsedSchema, Type.Null()]),
        deviceMemoryLatency: Type.Union([LatencyUsedSchema, Type.Null()]),
        migMode: Type.Union([Type.String(), Type.Null()], { description: 'enabled, disabled, or null without NVML' }),
      },
      { additionalProperties: false, description: 'the numbers the advice was computed from' },
    ),
    profiles: Type.Array(FitProfileSchema, {
      description: 'every GPU-instance profile NVML lists, smallest first; the whole GPU when NVML lists none',
    }),
    smallestFittingProfile: Type.Union([Type.String(), Type.Null()], {
      description: 'the smallest profile whose reachable L2 (else share) holds the working set; null when none does',
    }),
    summary: Type.String({ description: 'the advice in one sentence' }),
    traffic: Type.Optional(FitTrafficSchema),
  },
  {
    additionalProperties: false,
    description:
      'which MIG profiles keep a working set in L2, with the numbers used; with `traffic` when the request described an access (stride, element, pattern)',
  },
);
export type FitAdvice = Static<typeof FitAdviceSchema>;
export type FitProfile = Static<typeof FitProfileSchema>;

/** 2^53: the largest byte count a JSON number carries exactly. */
const MAX_WORKING_SET_BYTES = Number.MAX_SAFE_INTEGER;

/** The access fields are GET /v1/gpus/{id}/traffic's, with the same limits; the working set is their footprint. */
export const FitQuerySchema = Type.Object(
  {
    workingSetBytes: Type.Integer({ minimum: 1, maximum: MAX_WORKING_SET_BYTES, description: 'the working set in bytes' }),
    strideBytes: Type.Optional(TrafficQuerySchema.properties.strideBytes),
    elementBytes: TrafficQuerySchema.properties.elementBytes,
    pattern: TrafficQuerySchema.properties.pattern,
    target: TrafficQuerySchema.properties.target,
  },
  { additionalProperties: false },
);
export type FitQuery = Static<typeof FitQuerySchema>;
