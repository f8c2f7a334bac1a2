import { describe, expect, it } from 'vitest';
import { GPU_MODELS, modelById, modelForDeviceName, SimulatedBackend } from '../../../server/gpu/sim/index.js';
import type { GpuIdentity } from '../../../server/model/gpu.js';

describe('simulated GPU models', () => {
  it('match NVIDIA device names', () => {
    expect(modelForDeviceName('NVIDIA H100 80GB HBM3')?.id).toBe('h100-sxm5-80gb');
    expect(modelForDeviceName('NVIDIA H100 PCIe')?.id).toBe('h100-sxm5-80gb');
    expect(modelForDeviceName('NVIDIA A100-PCIE-40GB')?.id).toBe('a100-40gb');
    expect(modelForDeviceName('NVIDIA A100-SXM4-80GB')).toBeNull();
    expect(modelForDeviceName('NVIDIA GeForce RTX 4090')).toBeNull();
  });

  it('prefer a configured model (of that exact name, else of the name’s family) over the catalogue’s', () => {
    const [standIn, a100, h100] = (['h100-l2-8mib', 'a100-40gb', 'h100-sxm5-80gb'] as const).map((id) => modelById(id)!);
    expect(modelForDeviceName(h100!.name, [a100!, standIn!])?.id).toBe('h100-l2-8mib');
    expect(modelForDeviceName(h100!.name, [standIn!, h100!])?.id).toBe('h100-sxm5-80gb');
    expect(modelForDeviceName('NVIDIA H100 PCIe', [a100!])?.id).toBe('h100-sxm5-80gb');
    expect(modelForDeviceName('NVIDIA A100-SXM4-40GB', [standIn!])?.id).toBe('a100-40gb');
    expect(modelForDeviceName('NVIDIA GeForce RTX 4090', [standIn!])).toBeNull();
  });

  it('measure an NVML-listed GPU with the configured model of its family, at that model’s tenant intensity', async () => {
    const nvmlH100: GpuIdentity = {
      uuid: 'GPU-00000000-0000-0000-0000-0000000000aa',
      index: 0,
      name: 'NVIDIA H100 80GB HBM3',
      vendor: 'nvidia',
      pciBusId: '00000000:18:00.0',
      driverVersion: '580.0',
    };
    const measure = async (models: string[]) => {
      const channel = await new SimulatedBackend({ models, seed: 1 }).open(nvmlH100);
      try {
        const hello = await channel.request('hello', {});
        const chase = await channel.request('pchase', {
          space: 'global.cg',
          arrayBytes: 4 * 1024 * 1024,
          strideBytes: 128,
          pattern: 'sequential',
          warmup: true,
          samples: 1024,
          smId: 0,
        });
        return { l2Bytes: hello.devices[0]!.l2CacheSizeBytes, latenciesCycles: chase.latenciesCycles };
      } finally {
        await channel.close();
      }
    };
    const idle = await measure(['h100-l2-8mib']);
    const busy = await measure(['a100-40gb', 'h100-l2-8mib-busy30']);
    expect(idle.l2Bytes).toBe(modelById('h100-l2-8mib')!.device.l2CacheSizeBytes);
    expect(busy.l2Bytes).toBe(idle.l2Bytes);
    expect(busy.latenciesCycles).not.toEqual(idle.latenciesCycles);
    expect(await measure(['a100-40gb', 'h100-l2-8mib'])).toEqual(idle);
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
