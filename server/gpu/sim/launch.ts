import type { ChaseLaunchArgs, ChaseLaunchInfo, MemorySpace } from '../../protocol/ops.js';
import type { GpuModel } from './model.js';
import { chaserSharedBytes } from '../../protocol/validate.js';

/**
 * What one chase launch runs under: its block's shared memory, the
 * carveout the driver picks for it, and so the L1 capacity each SM of the
 * launch has (the L1 and shared memory are one array per SM).
 */
export interface ChaseLaunch {
  info: ChaseLaunchInfo;
  l1Bytes: number;
}

/**
 * Static shared memory of the native probe's chase kernels (its block-level
 * bookkeeping), which the launch info counts beside the dynamic part: the
 * recorded launches of test/fixtures/h100/launch-settings.json and
 * consumer-selftest.json report 16 bytes over samples × 4 + 4 (+ shared
 * arrays). Taken for the pair kernel too, whose launch was not recorded.
 */
export const CHASE_KERNEL_STATIC_SHARED_BYTES = 16;

/**
 * The shared-memory carveout of one SM: the smallest of the model's steps
 * that holds the block's shared memory plus the driver's per-block reserve,
 * and at least the preferred percentage of the most shared memory an SM can
 * have (rounded up to a step).
 */
export function carveoutBytes(model: GpuModel, sharedBytesPerBlock: number, carveoutPercent: number): number {
  const steps = model.l1.carveoutStepsBytes;
  const needed = sharedBytesPerBlock + model.device.reservedSharedMemPerBlockBytes;
  const preferred = Math.ceil((carveoutPercent / 100) * model.device.sharedMemPerMultiprocessorBytes);
  const wanted = Math.max(needed, preferred);
  return steps.find((step) => step >= wanted) ?? steps.at(-1)!;
}

/** The L1 one SM has under that carveout. */
export function l1CapacityBytes(model: GpuModel, sharedBytesPerBlock: number, carveoutPercent: number): number {
  return model.l1.unifiedBytes - carveoutBytes(model, sharedBytesPerBlock, carveoutPercent);
}

/**
 * The launch of `chains` timing `samples` loads each: one block per chaser,
 * except a same-SM pair, whose two chasers share one block. The carveout
 * preference defaults to 0 (most L1), or 100 when a chain lives in shared
 * memory; the fetch-granularity limit is echoed when the request set one.
 */
export function chaseLaunch(
  model: GpuModel,
  chains: ReadonlyArray<{ space: MemorySpace; arrayBytes: number }>,
  samples: number,
  settings: ChaseLaunchArgs & { oneBlock?: boolean },
): ChaseLaunch {
  const needs = chains.map((chain) => chaserSharedBytes(chain, samples));
  const dynamicBytes = settings.oneBlock ? needs.reduce((sum, need) => sum + need, 0) : Math.max(...needs);
  const sharedBytesPerBlock = dynamicBytes + CHASE_KERNEL_STATIC_SHARED_BYTES;
  const carveoutPercent = settings.carveoutPercent ?? (chains.some((chain) => chain.space === 'shared') ? 100 : 0);
  const info: ChaseLaunchInfo = { carveoutPercent, sharedBytesPerBlock, flushedL2: settings.flushL2 ?? false };
  if (settings.l2FetchGranularityBytes !== undefined) info.l2FetchGranularityBytes = settings.l2FetchGranularityBytes;
  return { info, l1Bytes: l1CapacityBytes(model, sharedBytesPerBlock, carveoutPercent) };
}
