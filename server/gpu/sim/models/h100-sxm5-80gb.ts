import type { GpuModel } from '../model.js';
import { gpcMapFromTpcs, KIB, kibSteps, latencyNoise, MIB, NVIDIA_LAUNCH_LIMITS, SECTORED_LINE } from './nvidia-common.js';

/**
 * An H100 SXM5 80GB as topod's own probe recorded one (test/fixtures/h100/,
 * driver 580.159.04, SM clock 1980 MHz, MIG off). Every latency is a
 * consumed one (the probe stores the loaded value before the stop clock):
 * the median of the named samples minus the recorded clock-read overhead.
 * test/unit/sim/model-from-fixtures.test.ts recomputes each value marked
 * "fixture" with the same rule and fails when the two drift apart.
 * Values marked "invented" have no recording behind them.
 */
export const H100_SXM5_80GB: GpuModel = {
  id: 'h100-sxm5-80gb',
  name: 'NVIDIA H100 80GB HBM3',
  // fixture hello.json: every runtime property as reported (totalMemoryBytes included).
  device: {
    ...NVIDIA_LAUNCH_LIMITS,
    architecture: 'sm_90',
    computeCapabilityMajor: 9,
    computeCapabilityMinor: 0,
    multiprocessorCount: 132,
    clockRateKHz: 1_980_000,
    memoryClockRateKHz: 2_619_000,
    memoryBusWidthBits: 5120,
    totalMemoryBytes: 85_017_493_504,
    l2CacheSizeBytes: 50 * MIB,
    persistingL2CacheMaxBytes: 32_768_000,
    sharedMemPerMultiprocessorBytes: 228 * KIB,
    sharedMemPerBlockOptinBytes: 227 * KIB,
    // fixture line-size.json (global.ca, 32 B stride, cold): the loads that miss
    // the L2 alternate with L2 hits, one miss per 64 B, so a miss brings 64 B.
    maxL2FetchGranularityBytes: 64,
  },
  // fixture calibrate.json: clockReadOverheadCycles as recorded; smClockHz rounded to the MHz.
  clock: { smClockHz: 1_980_000_000, clockReadOverheadCycles: 4 },
  noise: latencyNoise(0.015),
  l1: {
    // unifiedBytes: the 256 KiB L1/shared array; with the 8 KiB carveout the
    // recorded l1-sweep.json launch took (512 samples × 4 B + 4 B + 1 KiB
    // reserve), 248 KiB of L1: fixture l1-sweep.json global.ca hits every
    // load up to 240 KiB and loses some from 248 KiB.
    unifiedBytes: 256 * KIB,
    carveoutStepsBytes: kibSteps(0, 8, 16, 32, 64, 100, 132, 164, 196, 228),
    // Sectors: fixture line-size.json global.ca with a 32 B stride, cold, hits the
    // L1 on no load, so a miss fills 32 B. Line 128 B: invented (not measured by topod yet).
    ...SECTORED_LINE,
    ways: 4,
    // fixture latency-by-space.json: median of the global.ca, readonly and texture series (8–16 KiB, warm) − overhead.
    hitLatencyCycles: { 'global.ca': 38, readonly: 38, texture: 89 },
    // Invented (not recorded by topod yet): one physical cache for the three paths, NVIDIA's unified L1/texture cache.
    physicalCacheOf: { 'global.ca': 0, readonly: 0, texture: 0 },
    cachesDefaultGlobalLoads: true,
  },
  // Size: fixture constant-sweep.json hits every load up to 2048 B and misses from 2304 B.
  // Line ≤ 64 B: in the 2304 B series two 64 B elements of one 128 B block hit and miss apart.
  // Latency: median of the constant-sweep series that hit on every load − overhead.
  constantL1: { sizeBytes: 2 * KIB, lineBytes: 64, sectorBytes: 64, ways: 4, hitLatencyCycles: 33 },
  // Size: only bounded from below (a 64 KiB constant bank walk still hits); 96 KiB is invented.
  // Line 256 B: fixture constant-sweep.json L1.5-hit series repeat their latency pattern every 256 B.
  // Latency: fixture latency-by-space.json constant (8 KiB, past the L1) median − overhead.
  constantL15: { sizeBytes: 96 * KIB, lineBytes: 256, sectorBytes: 256, ways: 8, hitLatencyCycles: 99 },
  // fixture latency-by-space.json: shared series median − overhead.
  shared: { latencyCycles: 31 },
  l2: {
    // Segment: the API's 50 MiB in two; fixture discovery-run.json l2.size.refine.2
    // (SM 0, sequential) keeps its hits up to 24.1 MiB, within 5 % of it.
    segment: { sizeBytes: 25 * MIB, ...SECTORED_LINE, ways: 16 },
    segmentCount: 2,
    // Invented, shaped after an H100 SXM5's l2.partition run (device tool, issue 9): two groups
    // of 64 and 68 SMs, whole TPCs, spread over the id range. GPCs 0, 3, 5 and 6 and the
    // first three lone TPCs (64 SMs) on segment 0; the rest (68) on segment 1.
    segmentOfGpc: [0, 1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1],
    // fixture l2-sweep.json, arrays up to 16 MiB (inside one segment): the samples
    // fall in two classes split at 285 cycles; each class's median − overhead.
    nearHitLatencyCycles: 264,
    farHitLatencyCycles: 298,
    // fixture latency-by-space.json global.cg (64 B stride): the class changes only
    // between 256 B chunks, in an irregular order (hashed here).
    homeInterleaveBytes: 256,
    // fixture l2-sweep.json: both classes within 8 MiB, which one SM's near segment holds.
    farHomedHitsCostFar: true,
    // fixture discovery-ii-3-runs.json l2.size.* from 24.2 to 50 MiB: past one partition a
    // sequential .cg walk still hits the far-homed half of its lines, slower (far-partition
    // hits), and misses the near-homed half; nothing hits past the whole 50 MiB.
    farLineResidence: 'near-and-home',
    // fixture discovery-ii-3-runs.json l2.size.* 28–49 MiB: median of the loads in 420–520 cycles − overhead.
    farPartitionHitLatencyCycles: 465,
    // Invented (the recorded 8 MiB bandwidth run is bound by the launch, not the L2).
    readBandwidthBytesPerS: 5.1e12,
    writeBandwidthBytesPerS: 3.9e12,
  },
  deviceMemory: {
    // fixture device-memory.json: median of the loads that missed the L2 (over
    // 400 cycles; 30–40 % hit the chain left dirty in the L2) − overhead.
    latencyCycles: 737,
    // fixture discovery-ii-3-runs.json l2.size.* past 55 MiB: the loads split at ~650 cycles into
    // near-homed (median 577) and far-homed (760) misses; the near class's median − overhead.
    nearLatencyCycles: 573,
    // fixture bandwidth.json: the 1 GiB read and write runs' bytes over their median seconds.
    readBandwidthBytesPerS: 3.07e12,
    writeBandwidthBytesPerS: 3.14e12,
  },
  // L2 ↔ device-memory traffic, fixture traffic-sweep.json.gz (counted bytes per access, 4 B elements).
  // Derived from the L2 above (server/gpu/sim/traffic.ts trafficModelOf), each as recorded: 32 B read
  // and write transactions (the sector: isolated reads under the 32 B fetch limit, isolated writes),
  // a 64 B fill (maxL2FetchGranularityBytes: isolated reads under the default limit), 128 B under the
  // 128 B limit (the line).
  traffic: {
    // Isolated reads move one fill each, no more.
    prefetchFactor: 1,
    // A store every other float reads its whole span, fresh or written array; a stride-1 store reads nothing.
    allocatingStores: { fresh: true, written: true },
    fullSectorStoresRead: false,
    // The sweep was counted (CUPTI). Counter noise: invented (each case was counted once).
    countersUnavailable: null,
    counterNoise: 0.002,
  },
  // fixture consumer-selftest.json: median of each space's unconsumedLatenciesCycles − overhead
  // (the same few cycles for L1, L2 and device-memory loads: the stop clock issues at once).
  unconsumedCycles: { 'global.ca': 8.5, 'global.cg': 8.5, readonly: 9, texture: 1, constant: 9, shared: 12, global: 8.5 },
  // fixture bandwidth.json: the 8 MiB read run's median seconds minus 8 MiB at the L2 read bandwidth above.
  launchOverheadS: 7.8e-6,
  // Invented: 64 B per cycle between an SM and the L2 (132 SMs could take
  // 16.7 TB/s, so the L2 caps a full launch), and a copy below the read and
  // write rates (both directions share device memory).
  bandwidth: { smBytesPerCycle: 64, copyBytesPerS: 2.75e12 },
  // The SM numbering and cluster groups are shaped after an H100 SXM5 measured
  // through the device tool (BENCHMARKS.md, issue 10): 62 TPCs dealt in turn
  // to 8 GPCs of 4, 8, 8, 8, 8, 8, 9 and 9 TPCs, then 4 TPCs that only ever
  // take clusters of two. Barrier and DSMEM costs are invented, of a
  // plausible order (the GPU is checked against the paper's figures in
  // REFERENCE.md, not against what the sim answers).
  compute: {
    gpcOfSm: gpcMapFromTpcs([4, 8, 8, 8, 8, 8, 9, 9], 4),
    clusters: {
      maxPortableClusterSize: 8,
      maxClusterSize: 16,
      barrier: {
        arriveCycles: 980,
        arriveCyclesPerBlockOver8: 20,
        waitCycles: 40,
        waitCyclesPerBlock: 3,
        syncthreadsCycles: 12,
        syncthreadsCyclesPerWarp: 2,
        gridSyncCycles: 2000,
        gridSyncCyclesPerBlock: 8,
      },
      dsmem: { remoteLatencyCycles: 190, pushBytesPerCyclePerWarp: 4, pullBytesPerCyclePerWarp: 1.5, globalBytesPerCyclePerWarp: 1.2 },
    },
  },
};
