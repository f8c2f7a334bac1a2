/**
 * GET /v1/node: the node's GPUs, whether same-model GPUs measured alike, and
 * how the GPUs connect. Each GPU's own measurements stay in its topology
 * document (topologyUrl); this document only summarises and links them.
 */
import { Type, type Static } from '@sinclair/typebox';
import { GPU_PROBE_STATUSES } from './document-schema.js';
import { Count, Nullable, StringEnum } from './schema-helpers.js';

/** nvmlGpuTopologyLevel_t by name; `nvidia-smi topo -m` prints them as X?, PIX, PXB, PHB, NODE, SYS. */
export const PCIE_ANCESTORS = ['internal', 'single', 'multiple', 'hostbridge', 'node', 'system'] as const;
export type PcieAncestor = (typeof PCIE_ANCESTORS)[number];

export const P2P_STATUSES = [
  'ok',
  'chipset-not-supported',
  'gpu-not-supported',
  'ioh-topology-not-supported',
  'disabled-by-regkey',
  'not-supported',
  'unknown',
] as const;
export type P2pStatus = (typeof P2P_STATUSES)[number];

const P2pStatusSchema = Nullable(StringEnum(P2P_STATUSES));

export const NodeGpuSchema = Type.Object(
  {
    uuid: Type.String(),
    index: Count(),
    name: Type.String(),
    pciBusId: Nullable(Type.String()),
    numaNode: Nullable(Count()),
    simulated: Type.Boolean(),
    probeStatus: StringEnum(GPU_PROBE_STATUSES),
    measured: Type.Boolean({ description: 'a topology document with a result is served for this GPU' }),
    resultFinishedAt: Nullable(Type.String({ format: 'date-time', description: 'when the served result’s probe finished' })),
    topologyUrl: Type.String({ description: 'this GPU’s own document: every measured value' }),
  },
  { additionalProperties: false },
);

export const AttributeDifferenceSchema = Type.Object(
  {
    element: Type.String(),
    attribute: Type.String(),
    tolerance: Type.Number({
      minimum: 0,
      description: 'relative spread allowed: 0 for discrete attributes, 0.03 for sizes, 0.1 otherwise',
    }),
    spread: Type.Number({ description: '(max − min) / min over the GPUs that have it' }),
    values: Type.Array(Type.Object({ uuid: Type.String(), value: Type.Number() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

export const ModelAgreementSchema = Type.Object(
  {
    name: Type.String({ description: 'the GPU model; GPUs are compared within a model' }),
    gpuUuids: Type.Array(Type.String()),
    measuredGpus: Count(),
    agree: Nullable(Type.Boolean(), { description: 'null: fewer than two measured GPUs of this model' }),
    compared: Count('attributes present on at least two GPUs'),
    differences: Type.Array(AttributeDifferenceSchema),
  },
  { additionalProperties: false },
);

export const GpuLinkSchema = Type.Object(
  {
    gpus: Type.Tuple([Type.String(), Type.String()], { description: 'the two GPUs’ UUIDs, lower index first' }),
    indices: Type.Tuple([Count(), Count()]),
    topo: Nullable(Type.String(), { description: 'as `nvidia-smi topo -m` prints it: NV<n>, PIX, PXB, PHB, NODE, SYS' }),
    nvlink: Nullable(
      Type.Object(
        {
          count: Count('NVLinks between them (through an NVSwitch: the fewer of either GPU’s switch links)'),
          via: StringEnum(['direct', 'switch'] as const),
        },
        { additionalProperties: false },
      ),
    ),
    pcie: Type.Object({ commonAncestor: Nullable(StringEnum(PCIE_ANCESTORS)) }, { additionalProperties: false }),
    p2p: Type.Object(
      { read: P2pStatusSchema, write: P2pStatusSchema, nvlink: P2pStatusSchema, atomics: P2pStatusSchema },
      { additionalProperties: false },
    ),
    degraded: Type.Array(Type.String(), { description: 'NVML answers refused for this pair ("p2p.nvlink: NOT_SUPPORTED")' }),
  },
  { additionalProperties: false },
);

export const NodeDocumentSchema = Type.Object(
  {
    host: Type.String({ description: 'the host name the daemon sees (in a pod: the pod’s)' }),
    gpus: Type.Array(NodeGpuSchema),
    agreement: Type.Object(
      {
        agree: Nullable(Type.Boolean(), {
          description: 'false when any model’s GPUs differ beyond the tolerances; null when no model has two measured GPUs',
        }),
        models: Type.Array(ModelAgreementSchema),
      },
      { additionalProperties: false },
    ),
    links: Type.Array(GpuLinkSchema, { description: 'every pair of GPUs NVML lists; [] without NVML' }),
    nvml: Type.Object(
      { available: Type.Boolean(), reason: Nullable(Type.String()), readAt: Nullable(Type.String({ format: 'date-time' })) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, description: 'the node: its GPUs, whether same-model GPUs agree, and how GPUs connect' },
);
export type NodeDocument = Static<typeof NodeDocumentSchema>;
