import type { ChaseLaunchInfo, MemorySpace } from '../protocol.js';
import type { GpuModel } from './model.js';
import { chaserSharedBytes } from './validate.js';

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
 * preference defaults to 0 (most L1), or 100 when a chain lives in shared memory.
 */
export function chaseLaunch(
  model: GpuModel,
  chains: ReadonlyArray<{ space: MemorySpace; arrayBytes: number }>,
  samples: number,
  settings: { flushL2?: boolean | undefined; carveoutPercent?: number | undefined; oneBlock?: boolean },
): ChaseLaunch {
  const needs = chains.map((chain) => chaserSharedBytes(chain, samples));
  const sharedBytesPerBlock = settings.oneBlock ? needs.reduce((sum, need) => sum + need, 0) : Math.max(...needs);
  const carveoutPercent = settings.carveoutPercent ?? (chains.some((chain) => chain.space === 'shared') ? 100 : 0);
  return {
    info: { carveoutPercent, sharedBytesPerBlock, flushedL2: settings.flushL2 ?? false },
    l1Bytes: l1CapacityBytes(model, sharedBytesPerBlock, carveoutPercent),
  };
}
