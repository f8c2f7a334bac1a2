import type { GpuModel } from '../model.js';
import { A100_40GB } from './a100-40gb.js';
import { H100_L2_8MIB } from './h100-l2-8mib.js';
import { H100_SXM5_80GB } from './h100-sxm5-80gb.js';

export const GPU_MODELS: Readonly<Record<string, GpuModel>> = {
  [H100_SXM5_80GB.id]: H100_SXM5_80GB,
  [A100_40GB.id]: A100_40GB,
  [H100_L2_8MIB.id]: H100_L2_8MIB,
};

export function modelById(id: string): GpuModel | null {
  return GPU_MODELS[id] ?? null;
}

/** The model for a GPU named by NVML or the runtime, e.g. a fake-NVML "NVIDIA A100-PCIE-40GB". */
export function modelForDeviceName(name: string): GpuModel | null {
  const exact = Object.values(GPU_MODELS).find((model) => model.name === name);
  if (exact) return exact;
  const upper = name.toUpperCase();
  if (upper.includes('H100')) return H100_SXM5_80GB;
  if (upper.includes('A100') && upper.includes('40GB')) return A100_40GB;
  return null;
}
