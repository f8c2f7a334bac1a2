/**
 * The values every part of the document is made of: a number with its unit,
 * where it came from and how sure topod is (DESIGN.md: the document), and a
 * load latency with its statistics. The parts (./document-schema.ts,
 * ./compute-schema.ts, …) reference these by `$ref`.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Count, StringEnum } from './schema-helpers.js';

export const VALUE_SOURCES = ['microbenchmark', 'api', 'nvml', 'derived', 'table'] as const;
export type ValueSource = (typeof VALUE_SOURCES)[number];
export const VALUE_UNITS = ['bytes', 'cycles', 'ns', 'bytes/s', 'count', 'hz'] as const;
export type ValueUnit = (typeof VALUE_UNITS)[number];

export const Confidence = () => Type.Number({ minimum: 0, maximum: 1, description: '0..1; present for microbenchmark and derived values' });

const measuredValueProperties = {
  value: Type.Number(),
  unit: StringEnum(VALUE_UNITS),
  source: StringEnum(VALUE_SOURCES, {
    description:
      'microbenchmark: measured by topod; api: the runtime said so; nvml: NVML said so; derived: computed from other values; table: topod’s table by architecture',
  }),
  confidence: Type.Optional(Confidence()),
  bound: Type.Optional(
    StringEnum(['lower', 'upper'] as const, {
      description:
        'the value is a bound, not the size: "lower" = at least this much (e.g. the constant L1.5, which holds more than the 64 KiB a constant bank can address)',
    }),
  ),
  note: Type.Optional(
    Type.String({
      description: 'what the value is exactly, where that is not obvious (which transfer a granularity is, the limit in force)',
    }),
  ),
};

export const MeasuredValueSchema = Type.Object(measuredValueProperties, {
  $id: 'MeasuredValue',
  additionalProperties: false,
  description: 'a value with where it came from and how sure topod is. Sizes in bytes, bandwidths in bytes/s',
});

export const AmountValueSchema = Type.Object(
  {
    ...measuredValueProperties,
    per: StringEnum(['sm', 'gpu'] as const, { description: 'per SM (per-SM caches) or per GPU (L2 segments)' }),
  },
  { $id: 'AmountValue', additionalProperties: false, description: 'how many of an element there are, per SM or per GPU' },
);

export const LatencyValueSchema = Type.Object(
  {
    unit: Type.Literal('cycles'),
    source: StringEnum(VALUE_SOURCES),
    mean: Type.Number(),
    p50: Type.Number(),
    p95: Type.Number(),
    stdev: Type.Number({ minimum: 0 }),
    sampleCount: Count('timed loads after outliers were dropped'),
    meanNs: Type.Optional(Type.Number({ description: 'nanoseconds at the measured SM clock, when it is known' })),
    confidence: Type.Optional(Confidence()),
  },
  { $id: 'LatencyValue', additionalProperties: false, description: 'load latency in SM clock cycles, clock-read overhead subtracted' },
);

export type MeasuredValue = Static<typeof MeasuredValueSchema>;
export type AmountValue = Static<typeof AmountValueSchema>;
export type LatencyValue = Static<typeof LatencyValueSchema>;
