import type { GpuModel } from '../model.js';
import { H100_SXM5_80GB } from './h100-sxm5-80gb.js';
import { MIB } from './nvidia-common.js';

/**
 * The simulated H100 with an 8 MiB L2 (two 4 MiB segments) instead of 50 MiB:
 * the same SMs, L1s, latencies and bandwidths, and a sixth of the L2 to walk,
 * so a whole discovery costs about 1.6 s of JavaScript instead of 5.7 s. Not
 * a real GPU: for the tests of the daemon's life (boots, probes, restarts,
 * faces), where what matters is that a GPU is probed, not how large its L2
 * is; the discovery tests check it is recovered like the others.
 * The persisting L2 share keeps the H100's proportion of the L2.
 */
const L2_BYTES = 8 * MIB;
const h100 = H100_SXM5_80GB.device;

export const H100_L2_8MIB: GpuModel = {
  ...H100_SXM5_80GB,
  id: 'h100-l2-8mib',
  name: 'Simulated H100 with an 8 MiB L2',
  device: {
    ...h100,
    l2CacheSizeBytes: L2_BYTES,
    persistingL2CacheMaxBytes:
      h100.persistingL2CacheMaxBytes === null ? null : Math.round((L2_BYTES * h100.persistingL2CacheMaxBytes) / h100.l2CacheSizeBytes),
  },
  l2: { ...H100_SXM5_80GB.l2, segment: { ...H100_SXM5_80GB.l2.segment, sizeBytes: L2_BYTES / H100_SXM5_80GB.l2.segmentCount } },
};
