import { describe, expect, it } from 'vitest';
import { GPU_MODELS, modelForDeviceName } from '../../../server/gpu/sim/index.js';

describe('simulated GPU models', () => {
  it('match NVIDIA device names', () => {
    expect(modelForDeviceName('NVIDIA H100 80GB HBM3')?.id).toBe('h100-sxm5-80gb');
    expect(modelForDeviceName('NVIDIA H100 PCIe')?.id).toBe('h100-sxm5-80gb');
    expect(modelForDeviceName('NVIDIA A100-PCIE-40GB')?.id).toBe('a100-40gb');
    expect(modelForDeviceName('NVIDIA A100-SXM4-80GB')).toBeNull();
    expect(modelForDeviceName('NVIDIA GeForce RTX 4090')).toBeNull();
  });

  it.each(Object.values(GPU_MODELS))('$id is self-consistent', (model) => {
    expect(model.l2.segment.sizeBytes * model.l2.segmentCount).toBe(model.device.l2CacheSizeBytes);
    expect(modelForDeviceName(model.name)?.id).toBe(model.id);
    for (const cache of [model.constantL1, model.constantL15, model.l2.segment]) {
      expect((cache.sizeBytes / cache.lineBytes) % cache.ways).toBe(0);
    }
    // Every carveout leaves an L1 that splits into its ways, and the largest leaves the shared memory the runtime reports.
    const steps = model.l1.carveoutStepsBytes;
    expect([...steps].sort((a, b) => a - b)).toEqual(steps);
    for (const step of steps) expect(((model.l1.unifiedBytes - step) / model.l1.lineBytes) % model.l1.ways).toBe(0);
    expect(steps.at(-1)).toBe(model.device.sharedMemPerMultiprocessorBytes);
    expect(model.device.sharedMemPerBlockOptinBytes! + model.device.reservedSharedMemPerBlockBytes).toBeLessThanOrEqual(steps.at(-1)!);
    const l1 = Math.max(...Object.values(model.l1.hitLatencyCycles));
    expect(l1).toBeLessThan(model.l2.nearHitLatencyCycles);
    expect(model.l2.nearHitLatencyCycles).toBeLessThan(model.l2.farHitLatencyCycles);
    expect(model.l2.farHitLatencyCycles).toBeLessThan(model.deviceMemory.latencyCycles);
  });
});
