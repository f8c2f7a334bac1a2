import type { GpuModel } from '../model.js';

/** What recent NVIDIA data-centre GPUs share; each model file keeps only what differs. */

export const KIB = 1024;
export const MIB = 1024 * KIB;

/** Runtime limits common to sm_80 and sm_90. */
export const NVIDIA_LAUNCH_LIMITS = {
  sharedMemPerBlockBytes: 48 * KIB,
  totalConstMemBytes: 64 * KIB,
  regsPerMultiprocessor: 65_536,
  regsPerBlock: 65_536,
  warpSize: 32,
  maxThreadsPerBlock: 1024,
  maxThreadsPerMultiprocessor: 2048,
  maxBlocksPerMultiprocessor: 32,
  /** cudaDevAttrReservedSharedMemoryPerBlock on sm_80 and sm_90. */
  reservedSharedMemPerBlockBytes: 1 * KIB,
  // The runtime's answers on sm_80 and sm_90 (the recorded H100's hello).
  concurrentKernels: true,
  cooperativeLaunch: true,
  globalL1CacheSupported: true,
  localL1CacheSupported: true,
  asicRevision: null,
} as const;

/** Gaussian jitter around each latency plus rare disturbances of 500–2000 cycles in 0.5% of loads. */
export function latencyNoise(relativeStdev: number): GpuModel['noise'] {
  return { relativeStdev, minStdevCycles: 0.6, outlierProbability: 0.005, outlierMinCycles: 500, outlierMaxCycles: 2000 };
}

/** 128 B lines of four 32 B sectors. */
export const SECTORED_LINE = { lineBytes: 128, sectorBytes: 32 } as const;

/** Carveout steps in KiB as bytes. */
export function kibSteps(...steps: number[]): readonly number[] {
  return steps.map((step) => step * KIB);
}

/**
 * An SM → GPC map: SMs come in TPCs of two consecutive ids, dealt to the GPCs
 * in turn (TPC t to GPC t mod n, skipping GPCs that are full), so a GPC's SM
 * ids are not one contiguous range and cut-down GPCs hold fewer TPCs.
 * `isolatedTpcs` more TPCs come last, each its own group: TPCs the cluster
 * scheduler never puts a cluster of more than two blocks on.
 */
export function gpcMapFromTpcs(tpcsPerGpc: readonly number[], isolatedTpcs = 0): number[] {
  const left = [...tpcsPerGpc];
  const total = left.reduce((sum, n) => sum + n, 0);
  const map: number[] = [];
  let gpc = 0;
  for (let tpc = 0; tpc < total; tpc += 1) {
    while (left[gpc % left.length] === 0) gpc += 1;
    const g = gpc % left.length;
    left[g]! -= 1;
    map.push(g, g);
    gpc += 1;
  }
  for (let tpc = 0; tpc < isolatedTpcs; tpc += 1) map.push(tpcsPerGpc.length + tpc, tpcsPerGpc.length + tpc);
  return map;
}
