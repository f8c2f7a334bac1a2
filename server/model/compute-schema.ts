/**
 * The compute side of the topology document (issue 10): SMs and their
 * limits (MT4G §III-B), the GPC layout measured from thread block cluster
 * placements, and what Hopper's clusters allow and cost
 * (shared/seeds/thread-block-cluster-paper.txt). Built by
 * server/discovery/strategies/compute.ts from its raw series alone.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Count, Nullable, partRef } from './schema-helpers.js';
import { LatencyValueSchema, MeasuredValueSchema } from './value-schema.js';

const measured = () => partRef(MeasuredValueSchema);
const latency = () => partRef(LatencyValueSchema);
const Fraction = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });

export const GpcLayoutSchema = Type.Object(
  {
    count: measured(),
    smsPerGpc: Type.Array(Count(), {
      description:
        'SMs of each GPC, in the order of `smIds`; with the SMs of `tpcsOfUnknownGpc` they sum to the SM count when every SM was placed',
    }),
    smIds: Type.Array(Type.Array(Count()), {
      description: 'the SM ids (%smid) of each GPC, ascending; GPCs ordered by their lowest SM id',
    }),
    tpcsOfUnknownGpc: Type.Array(Type.Array(Count()), {
      description:
        'TPCs (two SMs) that never ran a cluster of more than two blocks: the scheduler keeps them out of larger clusters, so placements cannot tell which GPC holds them, and they sit idle for clusters larger than 2. Not counted in `count` or `smsPerGpc`',
    }),
    tpcs: Nullable(Type.Array(Type.Array(Count())), {
      description:
        'the SM pairs of each TPC, where clusters of two blocks always landed on the same two SMs; null when they did not (TPCs not told apart)',
    }),
    unplacedSmIds: Type.Array(Count(), { description: 'SMs no cluster ran on, whose GPC is therefore unknown' }),
    occupancyAgreement: Nullable(
      Fraction(
        'share of cluster sizes 2 … max whose cudaOccupancyMaxActiveClusters equals the clusters this map holds at once (Σ ⌊SMs of a group / size⌋ over the GPCs and TPCs above): 1 when the map explains the runtime’s occupancy for every size',
      ),
      {
        description: 'null when the limits were not read',
      },
    ),
    confidence: Fraction('share of the repeated placement rounds that alone give this same map'),
    source: Type.Literal('microbenchmark'),
    note: Type.String({ description: 'how the map was measured' }),
  },
  {
    $id: 'GpcLayout',
    additionalProperties: false,
    description:
      'which SMs share a GPC: blocks of one thread block cluster always run in one GPC, so SMs that share a cluster in any launch (clusters of every size, several rounds) are joined; SMs that never do are in different GPCs',
  },
);

const ClusterSizeRow = Type.Object(
  {
    clusterSize: Count(),
    activeClusters: Count('cudaOccupancyMaxActiveClusters with one block per SM'),
    idleSms: Count('SMs left without a block when that many clusters run: SMs − activeClusters × clusterSize'),
    measuredIdleSms: Nullable(Count(), {
      description: 'SMs no block ran on in a launch of activeClusters clusters that was resident at once; null when not measured',
    }),
  },
  { additionalProperties: false },
);

const ClusterSyncRow = Type.Object(
  {
    clusterSize: Count(),
    threadsPerBlock: Count(),
    arrive: latency(),
    wait: latency(),
    clusterSync: latency(),
    syncthreads: latency(),
    gridSync: latency(),
  },
  {
    additionalProperties: false,
    description:
      'barrier latencies in SM cycles (clock-read overhead subtracted): barrier.cluster.arrive, barrier.cluster.wait, cluster.sync(), __syncthreads(), grid.sync() over as many blocks',
  },
);

const ClusterLaunchRow = Type.Object(
  {
    clusterSize: Count(),
    blocks: Count(),
    clusterSeconds: Type.Number({ minimum: 0, description: 'median event-timed seconds of the clustered launch' }),
    plainSeconds: Type.Number({ minimum: 0, description: 'the same grid launched without clusters' }),
    overheadFraction: Type.Number({ description: 'clusterSeconds / plainSeconds − 1' }),
  },
  { additionalProperties: false },
);

const DsmemSchema = Type.Object(
  {
    smIds: Type.Array(Count(), { description: 'the SMs of the reading block and of the block whose shared memory it read' }),
    localLatency: latency(),
    remoteLatency: latency(),
    l2Latency: latency(),
    transferBytes: Count(),
    pushBandwidth: measured(),
    pullBandwidth: measured(),
    globalBandwidth: measured(),
  },
  {
    additionalProperties: false,
    description:
      'distributed shared memory: load latency from the own SM’s shared memory, a neighbour’s (same GPC) and the L2; bytes/s of moving transferBytes from one block to the other by pushing into the receiver’s shared memory, pulling from the sender’s, or through global memory (each timed with its cluster barriers)',
  },
);

export const ThreadBlockClustersSchema = Type.Object(
  {
    supported: Type.Boolean(),
    reason: Nullable(Type.String(), { description: 'why not, when unsupported' }),
    maxPortableClusterSize: Nullable(measured()),
    maxClusterSize: Nullable(measured(), { description: 'with cudaFuncAttributeNonPortableClusterSizeAllowed' }),
    bySize: Type.Array(ClusterSizeRow),
    sync: Type.Array(ClusterSyncRow),
    launchOverhead: Type.Array(ClusterLaunchRow),
    dsmem: Nullable(DsmemSchema),
  },
  {
    $id: 'ThreadBlockClusters',
    additionalProperties: false,
    description: 'Hopper thread block clusters: limits, occupancy per size, barrier, launch and DSMEM costs',
  },
);

const nullableMeasured = (description: string) => Nullable(measured(), { description });

export const ComputeTopologySchema = Type.Object(
  {
    multiprocessorCount: measured(),
    coresPerSm: nullableMeasured(
      'FP32 cores per SM from the table by compute capability (source "table"); null for an architecture the table lacks',
    ),
    warpSchedulersPerSm: nullableMeasured('warp schedulers per SM, from the same table'),
    warpSize: measured(),
    registersPerBlock: nullableMeasured('32-bit registers one block may use'),
    registersPerSm: nullableMeasured('32-bit registers of one SM'),
    maxThreadsPerBlock: measured(),
    maxThreadsPerSm: nullableMeasured('resident threads per SM'),
    maxBlocksPerSm: nullableMeasured('resident blocks per SM'),
    smClock: nullableMeasured('SM clock: measured against the global timer when calibrated, else the runtime’s'),
    smIds: Nullable(Type.Array(Count()), { description: 'the SM ids (%smid) a launch of one block per SM ran on' }),
    gpcs: Nullable(Type.Unsafe<Static<typeof GpcLayoutSchema>>({ $ref: 'GpcLayout#' }), {
      description: 'null where clusters cannot be launched (the map is measured through them)',
    }),
    clusters: Type.Unsafe<Static<typeof ThreadBlockClustersSchema>>({ $ref: 'ThreadBlockClusters#' }),
  },
  {
    $id: 'ComputeTopology',
    additionalProperties: false,
    description: 'the compute side: SMs, their limits, the GPCs they sit in, and thread block clusters',
  },
);

export const COMPUTE_PARTS = [GpcLayoutSchema, ThreadBlockClustersSchema, ComputeTopologySchema];

export type GpcLayout = Static<typeof GpcLayoutSchema>;
export type ThreadBlockClusters = Static<typeof ThreadBlockClustersSchema>;
export type ComputeTopology = Static<typeof ComputeTopologySchema>;
