/**
 * The traffic between the L2 and device memory (issue 20; the LLC-memory
 * traffic paper, shared/seeds/llc-memory-traffic-paper.txt): DRAM transaction
 * sizes, whether stores allocate, and the bytes a strided access really moves
 * per useful byte. Built by server/discovery/strategies/traffic.ts from its raw series
 * alone; every value says where it came from (`source`) and how it was
 * measured (`method`: hardware counters through CUPTI, or kernel times
 * converted with the measured device-memory bandwidth).
 */
import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { Count, Nullable, StringEnum } from './schema-helpers.js';

export const TRAFFIC_METHOD_NAMES = ['counters', 'timing'] as const;
export type TrafficMethodName = (typeof TRAFFIC_METHOD_NAMES)[number];
export const TRAFFIC_PATTERN_NAMES = ['read', 'write', 'rmw', 'vecmul'] as const;
export type TrafficPatternName = (typeof TRAFFIC_PATTERN_NAMES)[number];
export const TRAFFIC_TARGET_NAMES = ['fresh', 'written'] as const;

const Fraction = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });
const Method = () =>
  StringEnum(TRAFFIC_METHOD_NAMES, {
    description:
      'counters: DRAM byte counters read through CUPTI around the kernel; timing: the kernel’s time × the measured device-memory bandwidth',
  });
const Source = () => Type.Literal('microbenchmark');
/** A `$ref` to a part defined here (the document's `$defs` hold it once, as every part). */
const ref = <T extends TSchema>(schema: T): TUnsafe<Static<T>> => Type.Unsafe<Static<T>>({ $ref: `${schema.$id as string}#` });

export const TrafficValueSchema = Type.Object(
  {
    value: Type.Number(),
    unit: StringEnum(['bytes', 'ratio'] as const),
    source: Source(),
    method: Method(),
    confidence: Fraction('0..1'),
    note: Type.Optional(Type.String()),
  },
  { $id: 'TrafficValue', additionalProperties: false, description: 'a measured traffic figure with its source and method' },
);

export const TrafficFlagSchema = Type.Object(
  {
    value: Type.Boolean(),
    source: Source(),
    method: Method(),
    confidence: Fraction('0..1'),
    note: Type.Optional(Type.String()),
  },
  { $id: 'TrafficFlag', additionalProperties: false, description: 'a measured yes/no with its source and method' },
);

export const TrafficPointSchema = Type.Object(
  {
    pattern: StringEnum(TRAFFIC_PATTERN_NAMES),
    target: StringEnum(TRAFFIC_TARGET_NAMES, { description: 'the written array: fresh (never written) or written before' }),
    elementBytes: Count(),
    strideBytes: Count('distance between two accesses'),
    accesses: Count(),
    usefulBytes: Count('bytes the accesses ask for: elementBytes per read or write (rmw 2, vecmul 3 per access)'),
    dramReadBytes: Type.Number({ minimum: 0 }),
    dramWriteBytes: Type.Number({ minimum: 0 }),
    bytesPerUsefulByte: Type.Number({ minimum: 0, description: '(DRAM read + write bytes) / useful bytes: the amplification' }),
    lineModelBytesPerUsefulByte: Type.Number({
      minimum: 0,
      description: 'what the line-size model predicts: one transaction per touched sector, no prefetch',
    }),
    method: Method(),
  },
  { $id: 'TrafficPoint', additionalProperties: false, description: 'one point of the amplification curve' },
);

export const TrafficFallbackErrorSchema = Type.Object(
  {
    strideBytes: Count(),
    pattern: StringEnum(TRAFFIC_PATTERN_NAMES),
    countedBytes: Type.Number({ minimum: 0 }),
    timedBytes: Type.Number({ minimum: 0 }),
    errorPercent: Type.Number({ minimum: 0, description: '|timed − counted| / counted × 100' }),
  },
  { $id: 'TrafficFallbackError', additionalProperties: false },
);

export const TrafficTopologySchema = Type.Object(
  {
    method: Method(),
    countersUnavailable: Nullable(Type.String(), {
      description: 'why hardware counters were not used (CUPTI missing, profiling restricted to administrators, AMD); null when they were',
    }),
    footprintBytes: Count('the bytes each array of the sweep spans'),
    readTransactionBytes: Nullable(ref(TrafficValueSchema), {
      description: 'the smallest unit device memory reads in (the L2 fetch granularity limit at its smallest)',
    }),
    writeTransactionBytes: Nullable(ref(TrafficValueSchema), { description: 'the unit device memory writes in' }),
    readFillBytes: Nullable(ref(TrafficValueSchema), {
      description: 'bytes one isolated read miss brings from device memory under the default L2 fetch granularity',
    }),
    storeFillBytes: Nullable(ref(TrafficValueSchema), {
      description: 'bytes an allocating store reads per sector it dirties, at isolated strides (counters only)',
    }),
    prefetchFactor: Nullable(ref(TrafficValueSchema), {
      description:
        'read bytes of strides past the fill unit over what the transaction-size model predicts (the paper’s Volta-on 1.6×; 1: none)',
    }),
    storesAllocate: Type.Object(
      {
        fresh: Nullable(ref(TrafficFlagSchema), {
          description: 'a partial-sector store to a never-written array reads the sector from device memory first',
        }),
        written: Nullable(ref(TrafficFlagSchema), { description: 'the same for an array written before' }),
      },
      { additionalProperties: false },
    ),
    fullSectorStoresRead: Nullable(ref(TrafficFlagSchema), {
      description: 'whether stores that cover whole sectors (stride 1) still read them (false: the paper’s streaming store)',
    }),
    curve: Type.Array(ref(TrafficPointSchema), { description: 'the amplification per pattern and stride' }),
    departsFromLineModelAtStrideBytes: Nullable(Count(), {
      description:
        'the smallest read stride from which the measured read bytes exceed the line-size model by more than 10 % (the prefetch effect); null when they never do',
    }),
    fallbackError: Nullable(
      Type.Object(
        {
          medianPercent: Type.Number({ minimum: 0 }),
          maxPercent: Type.Number({ minimum: 0 }),
          points: Type.Array(ref(TrafficFallbackErrorSchema)),
        },
        { additionalProperties: false },
      ),
      { description: 'the timing method’s error against the counters, where both ran; null otherwise' },
    ),
    note: Type.String(),
  },
  {
    $id: 'TrafficTopology',
    additionalProperties: false,
    description: 'L2 ↔ device-memory traffic: transaction sizes, allocating stores, the stride amplification curve',
  },
);

export const TRAFFIC_PARTS = [TrafficValueSchema, TrafficFlagSchema, TrafficPointSchema, TrafficFallbackErrorSchema, TrafficTopologySchema];

export type TrafficValue = Static<typeof TrafficValueSchema>;
export type TrafficFlag = Static<typeof TrafficFlagSchema>;
export type TrafficPoint = Static<typeof TrafficPointSchema>;
export type TrafficFallbackError = Static<typeof TrafficFallbackErrorSchema>;
export type TrafficTopology = Static<typeof TrafficTopologySchema>;
