/**
 * One spelling of the driver version for the cache key, whichever source is
 * up. NVML's system driver version ("580.95.05") and the kernel module's
 * (/proc/driver/nvidia/version) are the same string; the probe runtime only
 * knows the CUDA/HIP driver API version ("cuda-13000"), which names many
 * driver releases. Without this, a short NVML outage re-keyed every GPU and
 * queued a re-probe of each.
 */
import { readFileSync } from 'node:fs';
import type { DriverIdentity } from '../model/gpu.js';

export interface DriverCandidates {
  nvml?: string | null;
  kernelModule?: string | null;
  /** What the store remembers for this GPU; its own source says how it was learnt. */
  lastKnown?: DriverIdentity | null;
  /** The probe runtime's driver API version, e.g. "cuda-13000". */
  runtime?: string | null;
}

/**
 * nvml > kernel module > a last-known release string > the runtime's version.
 * A last-known value learnt from the runtime is no better than the runtime now.
 */
export function resolveDriverIdentity(candidates: DriverCandidates): DriverIdentity | null {
  if (candidates.nvml) return { version: candidates.nvml, source: 'nvml' };
  if (candidates.kernelModule) return { version: candidates.kernelModule, source: 'kernel-module' };
  const last = candidates.lastKnown;
  if (last && last.source !== 'runtime') return { version: last.version, source: 'last-known' };
  if (candidates.runtime) return { version: candidates.runtime, source: 'runtime' };
  return last ? { version: last.version, source: 'last-known' } : null;
}

/** "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Wed …" (open and proprietary modules alike). */
export function parseKernelModuleVersion(text: string): string | null {
  const line = text.split('\n').find((l) => l.startsWith('NVRM version:'));
  return line ? (/Kernel Module(?: for \S+)?\s+(\d+(?:\.\d+)+)/.exec(line)?.[1] ?? null) : null;
}

export const KERNEL_MODULE_VERSION_FILE = '/proc/driver/nvidia/version';

export function readKernelModuleVersion(file = KERNEL_MODULE_VERSION_FILE): string | null {
  try {
    return parseKernelModuleVersion(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}
