/**
 * The scheduler's `lockGpu` (server/jobs/scheduler.ts): one measurement per
 * GPU across processes, through the GPU's lock file (./lock.ts). Tried at
 * once; when another process holds it, the job says who, then waits.
 */
import type { GpuIdentity } from '../model/gpu.js';
import { gpuLockFile, ownerLine, type HeldLock, type LockAttempt } from './lock.js';

export type LockGpu = (gpu: GpuIdentity, signal: AbortSignal, onWait: (owner: string) => void) => Promise<HeldLock>;

export interface LockTaker {
  acquire(file: string, options: { wait: boolean; owner: string; signal?: AbortSignal }): Promise<LockAttempt>;
}

export function gpuLocker(lockDir: string, locks: LockTaker): LockGpu {
  return async (gpu, signal, onWait) => {
    const file = gpuLockFile(lockDir, gpu.uuid);
    const owner = ownerLine(`topod probe of ${gpu.uuid}`);
    const first = await locks.acquire(file, { wait: false, owner, signal });
    if (first.acquired) return first.lock;
    onWait(first.owner);
    const waited = await locks.acquire(file, { wait: true, owner, signal });
    if (!waited.acquired) throw new Error(`the GPU lock ${file} could not be taken`);
    return waited.lock;
  };
}
