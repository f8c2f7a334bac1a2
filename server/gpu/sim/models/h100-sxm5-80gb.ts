import type { GpuModel } from '../model.js';
import { KIB, latencyNoise, MIB, NVIDIA_LAUNCH_LIMITS, SECTORED_LINE } from './nvidia-common.js';

/** Invented but plausible H100 SXM5 parameters: two L2 segments, 256 KiB L1/shared per SM. */
export const H100_SXM5_80GB: GpuModel = {
  id: 'h100-sxm5-80gb',
  name: 'NVIDIA H100 80GB HBM3',
  device: {
    ...NVIDIA_LAUNCH_LIMITS,
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
    sharedMemPerBlockOptinBytes: 227 * KIB,
  },
  clock: { smClockHz: 1_755_000_000, clockReadOverheadCycles: 6 },
  noise: latencyNoise(0.015),
  l1: { sizeBytes: 240 * KIB, ...SECTORED_LINE, ways: 4, hitLatencyCycles: { 'global.ca': 34, readonly: 32, texture: 37 } },
  constantL1: { sizeBytes: 2 * KIB, lineBytes: 64, sectorBytes: 64, ways: 4, hitLatencyCycles: 19 },
  constantL15: { sizeBytes: 96 * KIB, lineBytes: 256, sectorBytes: 256, ways: 8, hitLatencyCycles: 98 },
  shared: { latencyCycles: 27 },
  l2: {
    segment: { sizeBytes: 25 * MIB, ...SECTORED_LINE, ways: 16 },
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
