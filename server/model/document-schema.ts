/**
 * The topology document's contract (DESIGN.md: the document), one TypeBox
 * schema per part; the types in ./document.ts are their Static<> types, so
 * what the builders return and what /openapi.json promises cannot drift.
 *
 * Every object is closed (additionalProperties: false): a field the builders
 * add without adding it here fails `tsc` (the builders are typed by these
 * schemas) and the response tests (they validate against them).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ClockSchema, DocumentDeviceSchema, DynamicDeviceSchema, DynamicStateSchema } from './device-schema.js';
import { MIG_PARTS, MigComputeInstanceSchema, MigInstanceSchema, MigViewSchema } from './mig-schema.js';
import { Count, Nullable, StringEnum, Timestamp, partRef } from './schema-helpers.js';

/** Bumped whenever the document's shape changes. 2: every field typed and closed; probe.reanalysedFrom. */
export const DOCUMENT_SCHEMA_VERSION = 2;

export const VALUE_SOURCES = ['microbenchmark', 'api', 'nvml', 'derived'] as const;
export type ValueSource = (typeof VALUE_SOURCES)[number];
export const VALUE_UNITS = ['bytes', 'cycles', 'ns', 'bytes/s', 'count', 'hz'] as const;
export type ValueUnit = (typeof VALUE_UNITS)[number];

/** NVIDIA: l1 l2 texture readOnly constantL1 constantL15 shared deviceMemory; AMD: vL1 sL1d l2 l3 lds deviceMemory. */
export const ELEMENT_NAMES = ['l1', 'l2', 'texture', 'readOnly', 'constantL1', 'constantL15', 'shared', 'deviceMemory', 'vL1', 'sL1d', 'l3', 'lds'] as const;
export type ElementName = (typeof ELEMENT_NAMES)[number];

const GPU_PROBE_STATUSES = ['unprobed', 'queued', 'running', 'probed', 'failed'] as const;

const Confidence = () => Type.Number({ minimum: 0, maximum: 1, description: '0..1; present for microbenchmark and derived values' });

const measuredValueProperties = {
  value: Type.Number(),
  unit: StringEnum(VALUE_UNITS),
  source: StringEnum(VALUE_SOURCES, { description: 'microbenchmark: measured by topod; api: the runtime said so; nvml: NVML said so; derived: computed from other values' }),
  confidence: Type.Optional(Confidence()),
};

export const MeasuredValueSchema = Type.Object(measuredValueProperties, {
  $id: 'MeasuredValue',
  additionalProperties: false,
  description: 'a value with where it came from and how sure topod is. Sizes in bytes, bandwidths in bytes/s',
});

export const AmountValueSchema = Type.Object(
  { ...measuredValueProperties, per: StringEnum(['sm', 'gpu'] as const, { description: 'per SM (per-SM caches) or per GPU (L2 segments)' }) },
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

const measured = () => Type.Optional(partRef(MeasuredValueSchema));

export const ElementTopologySchema = Type.Object(
  {
    size: measured(),
    latency: Type.Optional(partRef(LatencyValueSchema)),
    lineSize: measured(),
    fetchGranularity: measured(),
    amount: Type.Optional(partRef(AmountValueSchema)),
    segmentSize: measured(),
    sharedWith: Type.Optional(Type.Array(StringEnum(ELEMENT_NAMES), { description: 'elements that share this one’s physical cache' })),
    readBandwidth: measured(),
    writeBandwidth: measured(),
    missPenalty: measured(),
  },
  { $id: 'ElementTopology', additionalProperties: false, description: 'one memory element; only what was measured or known is present' },
);

const element = () => Type.Optional(partRef(ElementTopologySchema));

/** One optional key per element name: a closed object, not a free-form map. */
export const ElementsSchema = Type.Object(
  {
    l1: element(),
    l2: element(),
    texture: element(),
    readOnly: element(),
    constantL1: element(),
    constantL15: element(),
    shared: element(),
    deviceMemory: element(),
    vL1: element(),
    sL1d: element(),
    l3: element(),
    lds: element(),
  },
  {
    $id: 'TopologyElements',
    additionalProperties: false,
    description: 'keyed by element name: l1, l2, texture, readOnly, constantL1, constantL15, shared, deviceMemory (NVIDIA); vL1, sL1d, l3, lds (AMD)',
  },
);

export const ProbeRunSchema = Type.Object(
  {
    resultId: Type.Optional(Count('the stored result this document was read from')),
    probeVersion: Type.String(),
    analysisVersion: Type.String({ description: 'the analysis that turned raw series into this document' }),
    driverVersion: Type.String({ description: 'driver release the GPU was measured under' }),
    startedAt: Timestamp('when the probe started'),
    finishedAt: Timestamp('when the probe finished'),
    durationMs: Count(),
    jobId: Type.String(),
    only: Nullable(Type.Array(StringEnum(ELEMENT_NAMES)), { description: 'the elements this probe re-measured; null: all' }),
    reanalysedFrom: Type.Optional(
      Type.Object(
        { resultId: Count(), analysisVersion: Type.String() },
        {
          additionalProperties: false,
          description: 'this result was rebuilt by a newer analysis from the stored raw series of that result, without touching the GPU',
        },
      ),
    ),
  },
  { $id: 'ProbeRun', additionalProperties: false, description: 'which probe produced the result: probe and analysis versions, driver, timings, job' },
);

const resultDocumentProperties = {
  schemaVersion: Type.Literal(DOCUMENT_SCHEMA_VERSION, { description: 'the document’s shape; see the README' }),
  gpu: Type.Object(
    { uuid: Type.String(), name: Type.String(), vendor: StringEnum(['nvidia', 'amd'] as const), pciBusId: Nullable(Type.String()) },
    { additionalProperties: false },
  ),
  simulated: Type.Boolean({ description: 'true when the simulated GPU produced the measurements' }),
  probe: partRef(ProbeRunSchema),
  device: partRef(DocumentDeviceSchema),
  clock: Nullable(partRef(ClockSchema)),
  elements: partRef(ElementsSchema),
  warnings: Type.Array(Type.String(), { description: 'what the analysis could not do, one sentence each' }),
};

/** The stored, immutable result of one probe (one row of probe_results); never served alone. */
export const ResultDocumentSchema = Type.Object(resultDocumentProperties, { additionalProperties: false });

export const TopologyStatusSchema = Type.Object(
  {
    probeStatus: StringEnum(GPU_PROBE_STATUSES),
    stale: Type.Boolean({ description: 'the result is for another driver or probe version; a re-probe is queued and this one is served meanwhile' }),
    staleReason: Nullable(Type.String()),
    activeJob: Nullable(Type.String({ description: 'URL of the queued or running probe job' })),
    present: Type.Boolean({ description: 'still visible to NVML / the backend right now' }),
  },
  { $id: 'TopologyStatus', additionalProperties: false, description: 'probe status of the GPU' },
);

/** Every named part, once: the `$defs` of GpuTopologyDocument, where each `$ref` above resolves. */
const PARTS: TSchema[] = [
  MeasuredValueSchema,
  AmountValueSchema,
  LatencyValueSchema,
  ElementTopologySchema,
  ElementsSchema,
  ProbeRunSchema,
  DocumentDeviceSchema,
  ClockSchema,
  TopologyStatusSchema,
  DynamicDeviceSchema,
  DynamicStateSchema,
  ...MIG_PARTS,
];
const partDefs = Object.fromEntries(PARTS.map((part) => [part.$id as string, part]));

export const GpuTopologyDocumentSchema = Type.Object(
  {
    ...resultDocumentProperties,
    status: partRef(TopologyStatusSchema),
    dynamic: partRef(DynamicStateSchema),
    mig: Nullable(partRef(MigViewSchema), { description: 'null when NVML does not list this GPU' }),
  },
  {
    $id: 'GpuTopologyDocument',
    definitions: partDefs,
    additionalProperties: false,
    description: 'a whole GPU: the measured topology merged with its probe status and the live NVML/MIG state',
  },
);

export const MigInstanceTopologyDocumentSchema = Type.Object(
  {
    schemaVersion: resultDocumentProperties.schemaVersion,
    kind: Type.Literal('mig-instance'),
    migDeviceUuid: Type.String(),
    parent: Type.Object(
      { uuid: Type.String(), name: Type.String(), probe: partRef(ProbeRunSchema), status: partRef(TopologyStatusSchema) },
      { additionalProperties: false, description: 'the parent GPU, whose probe measured the per-SM caches' },
    ),
    simulated: Type.Boolean({ description: 'true when the simulated GPU produced the measurements' }),
    instance: partRef(MigInstanceSchema),
    computeInstance: Type.Union([partRef(MigComputeInstanceSchema), Type.Null()], {
      description: 'the compute instance this MIG device is (its SMs; the L2 and memory are its GPU instance\'s, shared by all its compute instances); null when NVML did not list it',
    }),
    elements: partRef(ElementsSchema),
    dynamic: partRef(DynamicStateSchema),
  },
  {
    $id: 'MigInstanceTopologyDocument',
    additionalProperties: false,
    description: 'a MIG device: per-SM caches from the parent probe, L2 and memory sized to the instance',
  },
);

export type MeasuredValue = Static<typeof MeasuredValueSchema>;
export type AmountValue = Static<typeof AmountValueSchema>;
export type LatencyValue = Static<typeof LatencyValueSchema>;
export type ElementTopology = Static<typeof ElementTopologySchema>;
export type TopologyElements = Static<typeof ElementsSchema>;
export type ProbeRun = Static<typeof ProbeRunSchema>;
export type ResultDocument = Static<typeof ResultDocumentSchema>;
export type TopologyStatus = Static<typeof TopologyStatusSchema>;
export type GpuTopologyDocument = Static<typeof GpuTopologyDocumentSchema>;
export type MigInstanceTopologyDocument = Static<typeof MigInstanceTopologyDocumentSchema>;
