import type { GpuModel } from '../model.js';
import { KIB, latencyNoise, MIB, NVIDIA_LAUNCH_LIMITS, SECTORED_LINE } from './nvidia-common.js';

/** Invented but plausible A100 40GB parameters: two 20 MiB L2 partitions; hits on far-homed lines cost more. */
export const A100_40GB: GpuModel = {
  id: 'a100-40gb',
  name: 'NVIDIA A100-SXM4-40GB',
  device: {
    ...NVIDIA_LAUNCH_LIMITS,
    architecture: 'sm_80',
    computeCapabilityMajor: 8,
    computeCapabilityMinor: 0,
    multiprocessorCount: 108,
    clockRateKHz: 1_410_000,
    memoryClockRateKHz: 1_215_000,
    memoryBusWidthBits: 5120,
    totalMemoryBytes: 42_298_834_944,
    l2CacheSizeBytes: 40 * MIB,
    persistingL2CacheMaxBytes: 31_457_280,
    sharedMemPerMultiprocessorBytes: 164 * KIB,
    sharedMemPerBlockOptinBytes: 163 * KIB,
  },
  clock: { smClockHz: 1_410_000_000, clockReadOverheadCycles: 5 },
  noise: latencyNoise(0.02),
  l1: { sizeBytes: 168 * KIB, ...SECTORED_LINE, ways: 4, hitLatencyCycles: { 'global.ca': 36, readonly: 34, texture: 41 } },
  constantL1: { sizeBytes: 2 * KIB, lineBytes: 64, sectorBytes: 64, ways: 4, hitLatencyCycles: 24 },
  constantL15: { sizeBytes: 80 * KIB, lineBytes: 256, sectorBytes: 256, ways: 8, hitLatencyCycles: 92 },
  shared: { latencyCycles: 29 },
  l2: {
    segment: { sizeBytes: 20 * MIB, ...SECTORED_LINE, ways: 16 },
    segmentCount: 2,
    nearHitLatencyCycles: 176,
    farHitLatencyCycles: 268,
    homeInterleaveBytes: 4 * KIB,
    farHomedHitsCostFar: true,
    readBandwidthBytesPerS: 3.9e12,
    writeBandwidthBytesPerS: 3.2e12,
  },
  deviceMemory: { latencyCycles: 610, readBandwidthBytesPerS: 1.4e12, writeBandwidthBytesPerS: 1.5e12 },
  launchOverheadS: 4e-6,
};
