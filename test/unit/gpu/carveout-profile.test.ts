import { describe, expect, it } from 'vitest';
import { discover } from '../../../server/discovery/index.js';
import { withCarveoutPreference } from '../../../server/gpu/carveout-profile.js';
import type { ProbeChannel } from '../../../server/gpu/backend.js';
import { CHASE_KERNEL_STATIC_SHARED_BYTES, GPU_MODELS, l1CapacityBytes, SimulatedBackend } from '../../../server/gpu/sim/index.js';

const model = GPU_MODELS['h100-sxm5-80gb']!;

async function openThrough(
  percent: number,
): Promise<{ channel: ProbeChannel; probeVersion: string; sent: Array<{ op: string; args: unknown }> }> {
  const backend = new SimulatedBackend({ models: [model.id], seed: 5 });
  const profiled = withCarveoutPreference(backend, percent);
  const [gpu] = await profiled.listDevices();
  const inner = await profiled.open(gpu!);
  const sent: Array<{ op: string; args: unknown }> = [];
  const channel: ProbeChannel = {
    request: async (op, args, options) => {
      const result = await inner.request(op, args, options);
      sent.push({ op, args: (result as { launch?: unknown }).launch ?? null });
      return result;
    },
    close: () => inner.close(),
  };
  return { channel, probeVersion: profiled.probeVersion, sent };
}

describe('withCarveoutPreference', () => {
  it('leaves the default (most L1) alone: same backend, same cache key', () => {
    const backend = new SimulatedBackend({ models: [model.id] });
    expect(withCarveoutPreference(backend, 0)).toBe(backend);
  });

  it('asks every chase without a carveout or a shared chain for the preference, and keys results by it', async () => {
    const { channel, probeVersion } = await openThrough(50);
    expect(probeVersion).toBe('sim-1+carveout50');
    const l1 = await channel.request('pchase', {
      space: 'global.ca',
      arrayBytes: 4096,
      strideBytes: 128,
      pattern: 'sequential',
      warmup: true,
      samples: 16,
    });
    expect(l1.launch).toMatchObject({ carveoutPercent: 50 });
    const explicit = await channel.request('pchase', {
      space: 'global.ca',
      arrayBytes: 4096,
      strideBytes: 128,
      pattern: 'sequential',
      warmup: true,
      samples: 16,
      carveoutPercent: 10,
    });
    expect(explicit.launch).toMatchObject({ carveoutPercent: 10 });
    const shared = await channel.request('pchase', {
      space: 'shared',
      arrayBytes: 4096,
      strideBytes: 4,
      pattern: 'sequential',
      warmup: true,
      samples: 16,
    });
    expect(shared.launch).toMatchObject({ carveoutPercent: 100 });
  });

  it('gives the L1 that carveout leaves, and the document records it', async () => {
    const { channel } = await openThrough(50);
    const outcome = await discover(channel, { only: ['l1'] });
    const blockShared = 2048 * 4 + 4 + CHASE_KERNEL_STATIC_SHARED_BYTES;
    const expected = l1CapacityBytes(model, blockShared, 50);
    expect(expected).toBeLessThan(l1CapacityBytes(model, blockShared, 0));
    expect(Math.abs(outcome.elements.l1!.size!.value - expected) / expected).toBeLessThan(0.01);
    expect(outcome.carveout).toMatchObject({ preferredSharedPercent: 50, blockSharedBytes: blockShared });
  }, 30_000);
});
