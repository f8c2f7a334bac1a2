import type { GpuModel } from '../model.js';

const KIB = 1024;
const MIB = 1024 * KIB;

/** Invented but plausible H100 SXM5 parameters: two L2 segments, 256 KiB L1/shared per SM. */
export const H100_SXM5_80GB: GpuModel = {
  id: 'h100-sxm5-80gb',
  name: 'NVIDIA H100 80GB HBM3',
  device: {
    architecture: 'sm_90',
    computeCapabilityMajor: 9,
    computeCapabilityMinor: 0,
    multiprocessorCount: 132,
    clockRateKHz: 1_980_000,
    memoryClockRateKHz: 2_619_000,
    memoryBusWidthBits: 5120,
    totalMemoryBytes: 85_045_149_696,
    l2CacheSizeBytes: 50 * MIB,
    persistingL2CacheMaxBytes: 32_768_000,
    sharedMemPerMultiprocessorBytes: 228 * KIB,
    sharedMemPerBlockBytes: 48 * KIB,
    sharedMemPerBlockOptinBytes: 227 * KIB,
    totalConstMemBytes: 64 * KIB,
    regsPerMultiprocessor: 65_536,
    regsPerBlock: 65_536,
    warpSize: 32,
    maxThreadsPerBlock: 1024,
    maxThreadsPerMultiprocessor: 2048,
    maxBlocksPerMultiprocessor: 32,
  },
  clock: { smClockHz: 1_755_000_000, clockReadOverheadCycles: 6 },
  noise: {
    relativeStdev: 0.015,
    minStdevCycles: 0.6,
    outlierProbability: 0.005,
    outlierMinCycles: 500,
    outlierMaxCycles: 2000,
  },
  l1: {
    sizeBytes: 240 * KIB,
    lineBytes: 128,
    sectorBytes: 32,
    ways: 4,
    hitLatencyCycles: { 'global.ca': 34, readonly: 32, texture: 37 },
  },
  constantL1: { sizeBytes: 2 * KIB, lineBytes: 64, sectorBytes: 64, ways: 4, hitLatencyCycles: 19 },
  constantL15: { sizeBytes: 96 * KIB, lineBytes: 256, sectorBytes: 256, ways: 8, hitLatencyCycles: 98 },
  shared: { latencyCycles: 27 },
  l2: {
    segment: { sizeBytes: 25 * MIB, lineBytes: 128, sectorBytes: 32, ways: 16 },
    segmentCount: 2,
    nearHitLatencyCycles: 206,
    farHitLatencyCycles: 262,
    homeInterleaveBytes: 4 * KIB,
    farHomedHitsCostFar: false,
    readBandwidthBytesPerS: 5.1e12,
    writeBandwidthBytesPerS: 3.9e12,
  },
  deviceMemory: { latencyCycles: 790, readBandwidthBytesPerS: 2.9e12, writeBandwidthBytesPerS: 3.0e12 },
  launchOverheadS: 4e-6,
};
