import type { GpuModel } from '../model.js';
import { gpcMapFromTpcs, KIB, kibSteps, latencyNoise, MIB, NVIDIA_LAUNCH_LIMITS, SECTORED_LINE } from './nvidia-common.js';

/**
 * An invented but plausible A100 40GB: no A100 series has been recorded.
 * Device properties and sizes are the sm_80 runtime's usual ones (192 KiB
 * L1/shared per SM, 164 KiB of it shareable, two 20 MiB L2 partitions).
 * Latencies are this model's earlier invented values scaled by how far the
 * H100-like model's values moved when they were re-derived from the H100
 * recordings (consumed loads instead of MT4G-style figures), element by
 * element: L1 ×38/34, read-only ×38/32, texture ×89/37, constant L1 ×33/19,
 * constant L1.5 ×99/98, shared ×31/27, L2 near ×264/206, far ×298/262,
 * device memory ×737/790, clock-read overhead ×4/6; rounded. The unconsumed
 * stop clock's issue costs are the H100-like model's, unscaled.
 */
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
    // Invented: the H100-like model's.
    maxL2FetchGranularityBytes: 64,
  },
  clock: { smClockHz: 1_410_000_000, clockReadOverheadCycles: 3 },
  noise: latencyNoise(0.02),
  l1: {
    unifiedBytes: 192 * KIB,
    carveoutStepsBytes: kibSteps(0, 8, 16, 32, 64, 100, 132, 164),
    ...SECTORED_LINE,
    ways: 4,
    hitLatencyCycles: { 'global.ca': 40, readonly: 40, texture: 99 },
    // One physical cache for the three paths (thesis §5: one L1/texture/read-only cache since Maxwell).
    physicalCacheOf: { 'global.ca': 0, readonly: 0, texture: 0 },
    cachesDefaultGlobalLoads: true,
  },
  constantL1: { sizeBytes: 2 * KIB, lineBytes: 64, sectorBytes: 64, ways: 4, hitLatencyCycles: 42 },
  constantL15: { sizeBytes: 80 * KIB, lineBytes: 256, sectorBytes: 256, ways: 8, hitLatencyCycles: 93 },
  shared: { latencyCycles: 33 },
  l2: {
    segment: { sizeBytes: 20 * MIB, ...SECTORED_LINE, ways: 16 },
    segmentCount: 2,
    // Invented: GPCs 0, 2 and 5 (46 SMs) on segment 0, GPCs 1, 3, 4 and 6 (62 SMs) on segment 1.
    segmentOfGpc: [0, 1, 0, 1, 1, 0, 1],
    nearHitLatencyCycles: 226,
    farHitLatencyCycles: 305,
    homeInterleaveBytes: 4 * KIB,
    // Hits on far-homed lines cost more, and far-homed lines stay in their home segment too.
    farHomedHitsCostFar: true,
    farLineResidence: 'near-and-home',
    // Invented: a far-partition hit past the near copy crosses between the partitions.
    farPartitionHitLatencyCycles: 420,
    readBandwidthBytesPerS: 3.9e12,
    writeBandwidthBytesPerS: 3.2e12,
  },
  deviceMemory: { latencyCycles: 569, readBandwidthBytesPerS: 1.4e12, writeBandwidthBytesPerS: 1.5e12 },
  unconsumedCycles: { 'global.ca': 8.5, 'global.cg': 8.5, readonly: 9, texture: 1, constant: 9, shared: 12, global: 8.5 },
  launchOverheadS: 4e-6,
  // Invented, as the H100-like model's: 64 B per SM cycle, a copy below the read and write rates.
  bandwidth: { smBytesPerCycle: 64, copyBytesPerS: 1.3e12 },
  // 54 TPCs in 7 GPCs (invented split); sm_80 has no thread block clusters, so
  // the map cannot be measured and every cluster op answers unsupported.
  compute: { gpcOfSm: gpcMapFromTpcs([8, 8, 8, 8, 8, 7, 7]), clusters: null },
};
