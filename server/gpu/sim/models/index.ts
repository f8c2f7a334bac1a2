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

/** The family a GPU's name belongs to, e.g. "NVIDIA H100 80GB HBM3" → 'h100'; null for one no model simulates. */
function familyOf(name: string): 'h100' | 'a100-40gb' | null {
  const upper = name.toUpperCase();
  if (upper.includes('H100')) return 'h100';
  if (upper.includes('A100') && upper.includes('40GB')) return 'a100-40gb';
  return null;
}

const FAMILY_MODELS = { h100: H100_SXM5_80GB, 'a100-40gb': A100_40GB } as const;

/**
 * The model for a GPU named by NVML or the runtime, e.g. a fake-NVML "NVIDIA A100-PCIE-40GB". Of `preferred`
 * (the models a daemon was configured with) first, then of the catalogue: the model of that exact name, else
 * one of the name's family. So `h100-l2-8mib`, configured, stands in for an NVML H100.
 */
export function modelForDeviceName(name: string, preferred: readonly GpuModel[] = []): GpuModel | null {
  const family = familyOf(name);
  return (
    preferred.find((model) => model.name === name) ??
    (family === null ? undefined : preferred.find((model) => familyOf(model.name) === family)) ??
    Object.values(GPU_MODELS).find((model) => model.name === name) ??
    (family === null ? null : FAMILY_MODELS[family])
  );
}
