import type { DeviceProperties, MemorySpace } from '../../protocol/ops.js';
import type { CacheGeometry } from './set-associative-cache.js';

/** The load paths through the per-SM L1 (or, on GPUs that split it, the caches beside it). */
export type L1Space = 'global.ca' | 'readonly' | 'texture';

/**
 * The simulator's ground truth for one GPU model, and the oracle tests hold
 * discovery on the sim to. Each model file says where every value came from:
 * the H100-like model from topod's own recorded H100 series
 * (test/fixtures/h100/, rechecked by test/unit/sim/model-from-fixtures.test.ts),
 * the A100-like model invented by scaling.
 */
export interface GpuModel {
  /** Registry key, e.g. "h100-sxm5-80gb". */
  id: string;
  /** As NVIDIA names the board, e.g. "NVIDIA H100 80GB HBM3". */
  name: string;
  /** What `hello` reports; index, uuid, name and PCI bus id are per device. */
  device: Omit<DeviceProperties, 'index' | 'uuid' | 'name' | 'pciBusId'> & {
    reservedSharedMemPerBlockBytes: number;
    maxL2FetchGranularityBytes: number;
  };
  clock: { smClockHz: number; clockReadOverheadCycles: number };
  noise: {
    /** Gaussian stdev as a fraction of the latency. */
    relativeStdev: number;
    minStdevCycles: number;
    /** Probability that one sample is disturbed (interrupt, refresh, contention). */
    outlierProbability: number;
    outlierMinCycles: number;
    outlierMaxCycles: number;
  };
  /**
   * Per-SM L1, unified with shared memory, used by global `.ca`, read-only
   * and texture loads. Its capacity is what the launch's carveout leaves of
   * `unifiedBytes` (launch.ts).
   */
  l1: Omit<CacheGeometry, 'sizeBytes'> & {
    /** L1 and shared memory of one SM together. */
    unifiedBytes: number;
    /** The shared-memory carveouts the driver picks from, ascending. */
    carveoutStepsBytes: readonly number[];
    hitLatencyCycles: Record<L1Space, number>;
    /**
     * The physical per-SM cache each L1 load path goes through (MT4G §IV-G:
     * what the sharing discovery must recover): paths with one id are one
     * cache. Id 0 is the unified L1 (its capacity set by the carveout); any
     * other id is a cache of its own with the same geometry and capacity (a
     * Kepler-like texture and read-only cache beside the L1). Constant loads
     * always go through their own constant L1 and L1.5.
     */
    physicalCacheOf: Record<L1Space, number>;
    /** Whether a plain global load (no cache operator, space `global`) goes through the L1, as `global.ca` does, or only the L2. */
    cachesDefaultGlobalLoads: boolean;
  };
  constantL1: CacheGeometry & { hitLatencyCycles: number };
  constantL15: CacheGeometry & { hitLatencyCycles: number };
  shared: { latencyCycles: number };
  l2: {
    /** One segment; an SM's loads fill its near segment, so its near hits are bounded by one segment. */
    segment: CacheGeometry;
    segmentCount: number;
    /**
     * The segment (partition) each GPC is wired to, by GPC id
     * (compute.gpcOfSm): an SM's near segment is its GPC's. SMs of one
     * segment are then spread over the id range, not its first or second
     * half, and the map is what l2.partition discovery must recover.
     */
    segmentOfGpc: readonly number[];
    nearHitLatencyCycles: number;
    /** A hit served by a line's far home segment (or, see below, any hit on a line homed there). */
    farHitLatencyCycles: number;
    /** Lines are homed on segments in chunks of this size, hashed (each group of segmentCount chunks spans every segment). */
    homeInterleaveBytes: number;
    /** When true a near hit on a line homed in the far segment costs the far latency (bimodal hits). */
    farHomedHitsCostFar: boolean;
    /**
     * Where a far-homed line lives once an SM has read it:
     * - 'near-and-home': in the SM's near segment, and in its home (filled on
     *   a miss too), so one SM keeps far hits up to the whole L2;
     * - 'near-only': in the reader's near segment alone (a hit in the home
     *   segment moves it), so one SM's hits end at one segment's size.
     */
    farLineResidence: 'near-and-home' | 'near-only';
    /**
     * A hit in a line's far home partition after the reader's near copy is
     * gone (arrays past one partition, 'near-and-home'): the request crosses
     * to the other partition. farHitLatencyCycles when absent.
     */
    farPartitionHitLatencyCycles?: number;
    readBandwidthBytesPerS: number;
    writeBandwidthBytesPerS: number;
  };
  deviceMemory: {
    /** A miss on a line homed in the far partition (and on every line when nearLatencyCycles is absent). */
    latencyCycles: number;
    /** A miss on a line homed in the reader's near partition: its memory controllers are the near ones. */
    nearLatencyCycles?: number;
    readBandwidthBytesPerS: number;
    writeBandwidthBytesPerS: number;
  };
  /**
   * What a stop clock that does not wait for the loaded value shows of a
   * load, per space, clock-read overhead aside: an issue cost, whatever level
   * serves the load (selftest.consumer).
   */
  unconsumedCycles: Record<MemorySpace, number>;
  /** Fixed cost of one kernel launch, seen by bandwidth timings and counted in simulated device time. */
  launchOverheadS: number;
  /**
   * Streaming (bandwidth, bandwidth.copy; server/gpu/sim/bandwidth.ts): each
   * SM moves what its threads keep in flight per round trip of the level's
   * latency, at most smBytesPerCycle; the level (l2 or deviceMemory) caps the
   * sum at its read or write bandwidth; every launch adds launchOverheadS.
   */
  bandwidth: {
    /** Bytes one SM moves to or from the L2 per SM cycle at most. */
    smBytesPerCycle: number;
    /** A device-to-device copy's rate, bytes read plus bytes written per second. */
    copyBytesPerS: number;
  };
  compute: ComputeModel;
  /** L2 ↔ device-memory traffic (TrafficModel below): overrides of what the L2 geometry implies (traffic.ts trafficModelOf). */
  traffic?: Partial<TrafficModel>;
}

/**
 * The compute side (issue 10): how SMs sit in GPCs, and the thread block
 * clusters a GPC co-schedules (null on GPUs without clusters: the probe then
 * answers `unsupported` for every cluster op, as on a real sm_80).
 */
export interface ComputeModel {
  /** The GPC of every SM, by SM id: the map discovery must recover exactly. */
  gpcOfSm: readonly number[];
  clusters: ClusterModel | null;
}

export interface ClusterModel {
  /** Largest cluster without / with cudaFuncAttributeNonPortableClusterSizeAllowed. */
  maxPortableClusterSize: number;
  maxClusterSize: number;
  /** Barrier costs in SM cycles, clock-read overhead aside (cluster.sync, grid.sync). */
  barrier: {
    arriveCycles: number;
    /** Added to an arrive for every block of the cluster beyond 8. */
    arriveCyclesPerBlockOver8: number;
    waitCycles: number;
    /** Added to a wait for every block of the cluster beyond the first. */
    waitCyclesPerBlock: number;
    syncthreadsCycles: number;
    syncthreadsCyclesPerWarp: number;
    gridSyncCycles: number;
    gridSyncCyclesPerBlock: number;
  };
  /** Distributed shared memory between two SMs of a GPC (cluster.dsmem). */
  dsmem: {
    /** One ld.shared::cluster from a neighbour's shared memory, consumed. */
    remoteLatencyCycles: number;
    /** Bytes per SM cycle one warp moves block 1 → block 0 (up to 4 warps add up): pushing, pulling, through global memory. */
    pushBytesPerCyclePerWarp: number;
    pullBytesPerCyclePerWarp: number;
    globalBytesPerCyclePerWarp: number;
  };
}

/**
 * The traffic between the L2 and device memory, as the simulated GPU has it
 * (issue 20). The truth discovery must recover: how many bytes one device
 * memory read and write moves, what a read miss fills, whether a store that
 * covers a sector in part reads it first (for a never-written and a written
 * array), whether whole-sector stores read, and an optional prefetch factor on
 * isolated reads (the paper's Volta-on 1.6×).
 */
export interface TrafficModel {
  readTransactionBytes: number;
  writeTransactionBytes: number;
  /** What one read miss fills by default; cudaLimitMaxL2FetchGranularity clamps it to [readTransactionBytes, lineBytes]. */
  fillBytes: number;
  lineBytes: number;
  /** Partial-sector stores read the sector first (an allocating store), by target. */
  allocatingStores: { fresh: boolean; written: boolean };
  /** Stores that cover whole sectors (contiguous accesses) read them too. */
  fullSectorStoresRead: boolean;
  /** Read bytes of accesses farther apart than the fill unit, over one fill each (1: no prefetch). */
  prefetchFactor: number;
  /** Why counters are unavailable (the probe answers `unsupported` with it); null when CUPTI works. */
  countersUnavailable: string | null;
  /** Relative stdev of a counter reading. */
  counterNoise: number;
}
