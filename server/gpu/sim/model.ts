import type { DeviceProperties } from '../protocol.js';
import type { CacheGeometry } from './set-associative-cache.js';

/**
 * The simulator's ground truth for one GPU model. These are invented
 * hardware parameters (a simulator needs some), not measured values; tests
 * use them as the oracle for what discovery should find on the sim.
 */
export interface GpuModel {
  /** Registry key, e.g. "h100-sxm5-80gb". */
  id: string;
  /** As NVIDIA names the board, e.g. "NVIDIA H100 80GB HBM3". */
  name: string;
  /** What `hello` reports; index, uuid, name and PCI bus id are per device. */
  device: Omit<DeviceProperties, 'index' | 'uuid' | 'name' | 'pciBusId'>;
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
  /** Per-SM L1 shared by global `.ca`, read-only and texture loads. */
  l1: CacheGeometry & { hitLatencyCycles: { 'global.ca': number; readonly: number; texture: number } };
  constantL1: CacheGeometry & { hitLatencyCycles: number };
  constantL15: CacheGeometry & { hitLatencyCycles: number };
  shared: { latencyCycles: number };
  l2: {
    /** One segment; an SM's loads fill its near segment, so its near hits are bounded by one segment. */
    segment: CacheGeometry;
    segmentCount: number;
    nearHitLatencyCycles: number;
    /** A hit served by a line's far home segment (or, see below, any hit on a line homed there). */
    farHitLatencyCycles: number;
    /** Lines are homed on segments, interleaved at this granularity. */
    homeInterleaveBytes: number;
    /** When true a near hit on a line homed in the far segment costs the far latency (A100-like bimodal hits). */
    farHomedHitsCostFar: boolean;
    readBandwidthBytesPerS: number;
    writeBandwidthBytesPerS: number;
  };
  deviceMemory: {
    latencyCycles: number;
    readBandwidthBytesPerS: number;
    writeBandwidthBytesPerS: number;
  };
  /** Fixed cost of one kernel launch, seen by bandwidth timings. */
  launchOverheadS: number;
}
