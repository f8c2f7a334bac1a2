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
import { COMPUTE_PARTS, ComputeTopologySchema } from './compute-schema.js';
import { ProbeConditionsSchema } from './conditions-schema.js';
import { ClockSchema, DocumentDeviceSchema, DynamicDeviceSchema, DynamicStateSchema } from './device-schema.js';
import { MIG_PARTS, MigComputeInstanceSchema, MigInstanceSchema, MigViewSchema } from './mig-schema.js';
import { TRAFFIC_PARTS, TrafficTopologySchema } from './traffic-schema.js';
import { AmountValueSchema, Confidence, LatencyValueSchema, MeasuredValueSchema } from './value-schema.js';
import { Count, Nullable, StringEnum, Timestamp, partRef } from './schema-helpers.js';

/**
 * Bumped whenever the document's shape changes. 2: every field typed and
 * closed; probe.reanalysedFrom. 3: bound and note on values, fillGranularity,
 * the carveout the per-SM benchmarks ran under. 4: the compute section (SMs,
 * GPCs, thread block clusters) and the "table" value source.
 */
export const DOCUMENT_SCHEMA_VERSION = 4;

/** NVIDIA: l1 l2 texture readOnly constantL1 constantL15 shared deviceMemory; AMD: vL1 sL1d l2 l3 lds deviceMemory. */
export const ELEMENT_NAMES = [
  'l1',
  'l2',
  'texture',
  'readOnly',
  'constantL1',
  'constantL15',
  'shared',
  'deviceMemory',
  'vL1',
  'sL1d',
  'l3',
  'lds',
] as const;
export type ElementName = (typeof ELEMENT_NAMES)[number];
/** Families a probe runs only when asked by name (server/discovery/registry.ts: opt-in strategies): they measure no element. */
export const PROBE_FAMILIES = ['traffic'] as const;
/** What a probe's `only` may name: elements, and the opt-in families. */
export const PROBE_TARGETS = [...ELEMENT_NAMES, ...PROBE_FAMILIES] as const;
export type ProbeTarget = (typeof PROBE_TARGETS)[number];

/** Where a GPU's probing stands (the topology status; a GPU summary's probe.status). */
export const GPU_PROBE_STATUSES = ['unprobed', 'queued', 'waiting', 'running', 'probed', 'failed'] as const;

const measured = () => Type.Optional(partRef(MeasuredValueSchema));

export const L2PartitionsSchema = Type.Object(
  {
    count: Type.Integer({ minimum: 1, description: '2 when every SM’s L2 hits fall in a near and a far class, 1 when they are one class' }),
    nearLatency: partRef(LatencyValueSchema),
    farLatency: Type.Optional(partRef(LatencyValueSchema)),
    smGroups: Type.Array(Type.Array(Count()), {
      description:
        'SM ids per group: SMs of one group find the same chunks near (they are wired to one partition), the groups opposite ones. Measured per GPU: boards of one model differ',
    }),
    confidence: Confidence(),
    source: Type.Literal('microbenchmark'),
    note: Type.Optional(Type.String({ description: 'how the groups were told apart, and SMs left out of them' })),
    // l2.farnear: a hit in a line's far home partition once the reader's near copy is gone (arrays past one
    // partition's capacity), and misses on lines homed in the reader's near and far partition (past the L2).
    farBeyondCapacityLatency: Type.Optional(partRef(LatencyValueSchema)),
    deviceMemoryNearLatency: Type.Optional(partRef(LatencyValueSchema)),
    deviceMemoryFarLatency: Type.Optional(partRef(LatencyValueSchema)),
    farNearConfidence: Type.Optional(Confidence()),
    sharedDataCapacityBytes: Type.Optional(
      Count(
        'bytes of data read by SMs of both groups the L2 keeps: each group’s near partition holds its own copy, so about one partition’s, not the sum',
      ),
    ),
    sharedDataNote: Type.Optional(
      Type.String({ description: 'the sizes measured (l2.farnear shared mode) and the first SM’s surviving share at each' }),
    ),
    persistingWindow: Type.Optional(
      Type.Object(
        {
          windowBytes: Count('the persisting access-policy window (and cudaLimitPersistingL2CacheSize) measured'),
          hitRateWithout: Type.Number({
            minimum: 0,
            maximum: 1,
            description: 'share of the window’s sampled lines that hit after streaming an array past the L2, no window',
          }),
          hitRateWith: Type.Number({ minimum: 0, maximum: 1, description: 'the same with a persisting window over them' }),
          note: Type.Optional(Type.String()),
        },
        { additionalProperties: false, description: 'l2.persist: what a persisting L2 window keeps of a stream past the L2' },
      ),
    ),
  },
  {
    $id: 'L2Partitions',
    additionalProperties: false,
    description:
      'the L2 as partitions (l2.partition): each chunk of memory is homed in one partition by an address hash; an SM reaches its own partition’s chunks at the near latency and the other’s at the far one. l2.farnear adds farBeyondCapacityLatency (a far-partition hit once the reader’s near copy is gone, arrays past one partition), deviceMemoryNearLatency and deviceMemoryFarLatency (misses on lines homed near and far), sharedDataCapacityBytes; l2.persist adds persistingWindow',
  },
);

export const ElementTopologySchema = Type.Object(
  {
    size: measured(),
    latency: Type.Optional(partRef(LatencyValueSchema)),
    lineSize: measured(),
    fetchGranularity: measured(),
    fillGranularity: measured(),
    amount: Type.Optional(partRef(AmountValueSchema)),
    segmentSize: measured(),
    sharedWith: Type.Optional(Type.Array(StringEnum(ELEMENT_NAMES), { description: 'elements that share this one’s physical cache' })),
    cachesGlobalLoadsByDefault: Type.Optional(
      Type.Boolean({
        description:
          'L1 only: whether a plain global load (ld.global, no cache operator) hits in this cache once warm, measured (sharing.defaultGlobal in the raw series)',
      }),
    ),
    readBandwidth: measured(),
    writeBandwidth: measured(),
    missPenalty: measured(),
    partitions: Type.Optional(partRef(L2PartitionsSchema)),
    measuredAt: Type.Optional(
      Timestamp('when the probe that measured this element started: a probe of some elements only keeps the others’ times'),
    ),
  },
  {
    $id: 'ElementTopology',
    additionalProperties: false,
    description:
      'one memory element; only what was measured or known is present. fetchGranularity: the smallest unit this cache fills (its sector); fillGranularity: what the next level moves in per miss under the limit in force, where that differs (L2: device memory fills 64 B on an H100 by default, cudaLimitMaxL2FetchGranularity)',
  },
);

const element = () => Type.Optional(partRef(ElementTopologySchema));

export const CarveoutSchema = Type.Object(
  {
    preferredSharedPercent: Type.Number({
      minimum: 0,
      maximum: 100,
      description: 'cudaFuncAttributePreferredSharedMemoryCarveout the per-SM benchmarks ran with (0: as much L1 as possible)',
    }),
    blockSharedBytes: Count('shared memory one block of the L1-size benchmark used (samples and sink), before the per-block reserve'),
    reservedSharedBytesPerBlock: Nullable(Count(), {
      description: 'what the driver reserves per block on top; null when the runtime does not say',
    }),
    note: Type.String({ description: 'how the carveout shapes the L1 size' }),
  },
  {
    $id: 'Carveout',
    additionalProperties: false,
    description:
      'the unified L1/shared-memory split the per-SM cache benchmarks ran under: the L1 holds what the shared-memory carveout leaves, so the L1, texture and read-only sizes hold for this carveout',
  },
);

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
    description:
      'keyed by element name: l1, l2, texture, readOnly, constantL1, constantL15, shared, deviceMemory (NVIDIA); vL1, sL1d, l3, lds (AMD)',
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
    only: Nullable(Type.Array(StringEnum(PROBE_TARGETS)), {
      description: 'the elements (and opt-in families) this probe re-measured; null: all elements',
    }),
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
  {
    $id: 'ProbeRun',
    additionalProperties: false,
    description: 'which probe produced the result: probe and analysis versions, driver, timings, job',
  },
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
  carveout: Nullable(partRef(CarveoutSchema), {
    description: 'null when no per-SM cache was measured, or the raw series predate the record',
  }),
  elements: partRef(ElementsSchema),
  compute: Type.Optional(
    Nullable(partRef(ComputeTopologySchema), {
      description: 'SMs, GPCs and thread block clusters; null when not measured, absent in documents before schema 4',
    }),
  ),
  traffic: Type.Optional(
    Nullable(partRef(TrafficTopologySchema), {
      description: 'L2 ↔ device-memory traffic (opt-in: a probe with only ["traffic"]); null or absent when never measured',
    }),
  ),
  conditions: Type.Optional(partRef(ProbeConditionsSchema)),
  warnings: Type.Array(Type.String(), { description: 'what the analysis could not do, one sentence each' }),
};

/** The stored, immutable result of one probe (one row of probe_results); never served alone. */
export const ResultDocumentSchema = Type.Object(resultDocumentProperties, { additionalProperties: false });

export const TopologyStatusSchema = Type.Object(
  {
    probeStatus: StringEnum(GPU_PROBE_STATUSES),
    stale: Type.Boolean({
      description: 'the result is for another driver or probe version; a re-probe is queued and this one is served meanwhile',
    }),
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
  L2PartitionsSchema,
  ElementTopologySchema,
  ElementsSchema,
  CarveoutSchema,
  ProbeRunSchema,
  DocumentDeviceSchema,
  ClockSchema,
  ProbeConditionsSchema,
  TopologyStatusSchema,
  DynamicDeviceSchema,
  DynamicStateSchema,
  ...MIG_PARTS,
  ...COMPUTE_PARTS,
  ...TRAFFIC_PARTS,
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
      description:
        "the compute instance this MIG device is (its SMs; the L2 and memory are its GPU instance's, shared by all its compute instances); null when NVML did not list it",
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

export type ElementTopology = Static<typeof ElementTopologySchema>;
export type L2Partitions = Static<typeof L2PartitionsSchema>;
export type TopologyElements = Static<typeof ElementsSchema>;
export type Carveout = Static<typeof CarveoutSchema>;
export type ProbeRun = Static<typeof ProbeRunSchema>;
export type ResultDocument = Static<typeof ResultDocumentSchema>;
export type TopologyStatus = Static<typeof TopologyStatusSchema>;
export type GpuTopologyDocument = Static<typeof GpuTopologyDocumentSchema>;
export type MigInstanceTopologyDocument = Static<typeof MigInstanceTopologyDocumentSchema>;
