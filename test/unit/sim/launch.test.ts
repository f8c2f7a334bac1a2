import { describe, expect, it } from 'vitest';
import { median } from '../../../server/analysis/index.js';
import type { ProbeChannel } from '../../../server/gpu/backend.js';
import type { PchaseArgs } from '../../../server/protocol/ops.js';
import {
  carveoutBytes,
  CHASE_KERNEL_STATIC_SHARED_BYTES,
  GPU_MODELS,
  l1CapacityBytes,
  SimulatedBackend,
  type GpuModel,
} from '../../../server/gpu/sim/index.js';

const H100 = GPU_MODELS['h100-sxm5-80gb']!;
const A100 = GPU_MODELS['a100-40gb']!;
const KIB = 1024;
/** The chase kernels' static shared memory, counted in every launch's sharedBytesPerBlock. */
const STATIC = CHASE_KERNEL_STATIC_SHARED_BYTES;

async function open(model: GpuModel, seed = 1): Promise<{ backend: SimulatedBackend; channel: ProbeChannel }> {
  const backend = new SimulatedBackend({ models: [model.id], seed });
  const [gpu] = await backend.listDevices();
  return { backend, channel: await backend.open(gpu!) };
}

function chase(overrides: Partial<PchaseArgs>): PchaseArgs {
  return { space: 'global.ca', arrayBytes: 64 * KIB, strideBytes: 128, pattern: 'sequential', warmup: true, samples: 256, ...overrides };
}

const overheadFree = (model: GpuModel, samples: number[]) => median(samples) - model.clock.clockReadOverheadCycles;
const l1HitShare = (model: GpuModel, samples: number[]) =>
  samples.filter((value) => value - model.clock.clockReadOverheadCycles < model.l1.hitLatencyCycles['global.ca'] + 10).length /
  samples.length;

describe('carveout and L1 capacity', () => {
  it('takes the smallest step holding the block’s shared memory and the per-block reserve', () => {
    // 2048 samples: 8 KiB of latencies + the 4 B sink + 1 KiB reserve → the 16 KiB step.
    expect(carveoutBytes(H100, 2048 * 4 + 4, 0)).toBe(16 * KIB);
    expect(l1CapacityBytes(H100, 2048 * 4 + 4, 0)).toBe(240 * KIB);
    expect(l1CapacityBytes(H100, 256 * 4 + 4, 0)).toBe(248 * KIB);
    expect(carveoutBytes(H100, 7 * KIB - 4, 0)).toBe(8 * KIB);
    expect(carveoutBytes(H100, 7 * KIB + 4, 0)).toBe(16 * KIB);
    expect(carveoutBytes(H100, 99 * KIB, 0)).toBe(100 * KIB);
    expect(l1CapacityBytes(A100, 2048 * 4 + 4, 0)).toBe(176 * KIB);
  });

  it('and at least the preferred percentage of the most shared memory an SM has, rounded up to a step', () => {
    expect(carveoutBytes(H100, 1028, 50)).toBe(132 * KIB); // 114 KiB asked
    expect(carveoutBytes(H100, 1028, 100)).toBe(228 * KIB);
    expect(l1CapacityBytes(H100, 1028, 100)).toBe(28 * KIB);
    expect(carveoutBytes(H100, 1028, 1)).toBe(8 * KIB);
    expect(carveoutBytes(A100, 1028, 100)).toBe(164 * KIB);
    expect(l1CapacityBytes(A100, 1028, 100)).toBe(28 * KIB);
  });

  it('sizes each launch’s L1: a 244 KiB array stays with 256 samples, not with 2048, and again with 256', async () => {
    const { channel } = await open(H100);
    const hits = async (samples: number) =>
      l1HitShare(H100, (await channel.request('pchase', chase({ arrayBytes: 244 * KIB, samples }))).latenciesCycles);
    expect(await hits(256)).toBeGreaterThan(0.99);
    expect(await hits(2048)).toBeLessThan(0.95);
    expect(await hits(256)).toBeGreaterThan(0.99);
    // carveoutPercent 100 leaves 28 KiB: a 64 KiB array misses.
    const preferShared = await channel.request('pchase', chase({ carveoutPercent: 100 }));
    expect(l1HitShare(H100, preferShared.latenciesCycles)).toBeLessThan(0.05);
  });
});

describe('launch info', () => {
  it('pchase: the carveout preference (default 0), the block’s shared bytes, the flush', async () => {
    const { channel } = await open(H100);
    expect((await channel.request('pchase', chase({}))).launch).toEqual({
      carveoutPercent: 0,
      sharedBytesPerBlock: 256 * 4 + 4 + STATIC,
      flushedL2: false,
    });
    expect((await channel.request('pchase', chase({ flushL2: true, carveoutPercent: 25 }))).launch).toEqual({
      carveoutPercent: 25,
      sharedBytesPerBlock: 256 * 4 + 4 + STATIC,
      flushedL2: true,
    });
    // A shared-space chain lives in the block and prefers shared memory by default.
    expect((await channel.request('pchase', chase({ space: 'shared', arrayBytes: 8 * KIB }))).launch).toEqual({
      carveoutPercent: 100,
      sharedBytesPerBlock: 256 * 4 + 4 + 8 * KIB + STATIC,
      flushedL2: false,
    });
  });

  it('pchase.batch: the largest chaser; pchase.pair: both chasers on one SM, the larger apart', async () => {
    const { channel } = await open(H100);
    const batch = await channel.request('pchase.batch', {
      space: 'shared',
      arrayBytesList: [4 * KIB, 16 * KIB],
      strideBytes: 128,
      pattern: 'sequential',
      warmup: true,
      samples: 64,
      flushL2: true,
    });
    expect(batch.launch).toEqual({ carveoutPercent: 100, sharedBytesPerBlock: 64 * 4 + 4 + 16 * KIB + STATIC, flushedL2: true });
    const pair = (placement: 'same-sm' | 'different-sm') =>
      channel.request('pchase.pair', {
        first: { space: 'global.ca', arrayBytes: 8 * KIB, strideBytes: 128 },
        second: { space: 'shared', arrayBytes: 4 * KIB, strideBytes: 128 },
        placement,
        samples: 32,
        carveoutPercent: 50,
      });
    expect((await pair('same-sm')).launch).toEqual({
      carveoutPercent: 50,
      sharedBytesPerBlock: 2 * (32 * 4 + 4) + 4 * KIB + STATIC,
      flushedL2: false,
    });
    expect((await pair('different-sm')).launch).toEqual({
      carveoutPercent: 50,
      sharedBytesPerBlock: 32 * 4 + 4 + 4 * KIB + STATIC,
      flushedL2: false,
    });
    // A pair fills its caches itself: it takes no flush (as the native probe, it ignores the field).
    const flushed = await channel.request('pchase.pair', {
      first: { space: 'global.ca', arrayBytes: 8 * KIB, strideBytes: 128 },
      second: { space: 'global.ca', arrayBytes: 8 * KIB, strideBytes: 128 },
      placement: 'same-sm',
      samples: 32,
      flushL2: true,
    } as never);
    expect(flushed.launch?.flushedL2).toBe(false);
  });

  it('sets the L2 fetch-granularity limit for one launch, echoes it, and restores the model’s after', async () => {
    const { channel } = await open(H100);
    const memoryShare = async (l2FetchGranularityBytes?: 32 | 64 | 128) => {
      const args = chase({ space: 'global.cg', strideBytes: 32, warmup: false, samples: 1024, flushL2: true });
      const result = await channel.request('pchase', l2FetchGranularityBytes === undefined ? args : { ...args, l2FetchGranularityBytes });
      expect(result.launch?.l2FetchGranularityBytes).toBe(l2FetchGranularityBytes);
      const slow = (H100.l2.farHitLatencyCycles + H100.deviceMemory.latencyCycles) / 2;
      return (
        result.latenciesCycles.filter((value) => value - H100.clock.clockReadOverheadCycles > slow).length / result.latenciesCycles.length
      );
    };
    expect(await memoryShare(32)).toBeCloseTo(1, 1);
    expect(await memoryShare(128)).toBeCloseTo(0.25, 1);
    expect(await memoryShare()).toBeCloseTo(0.5, 1);
    const batch = await channel.request('pchase.batch', {
      space: 'global.cg',
      arrayBytesList: [4096],
      strideBytes: 32,
      pattern: 'sequential',
      warmup: false,
      samples: 16,
      l2FetchGranularityBytes: 128,
    });
    expect(batch.launch?.l2FetchGranularityBytes).toBe(128);
  });

  it('a cold walk finds the freshly built chain in the L2 unless the launch flushes it', async () => {
    const { channel } = await open(H100);
    const cold = (flushL2: boolean) =>
      channel.request('pchase', chase({ space: 'global.cg', strideBytes: 32, warmup: false, samples: 1024, flushL2 }));
    const fromMemory = (samples: number[]) =>
      samples.filter(
        (value) => value - H100.clock.clockReadOverheadCycles > (H100.l2.farHitLatencyCycles + H100.deviceMemory.latencyCycles) / 2,
      ).length / samples.length;
    expect(fromMemory((await cold(false)).latenciesCycles)).toBeLessThan(0.02);
    // Flushed: every other 32 B sector comes from device memory (64 B fills).
    expect(fromMemory((await cold(true)).latenciesCycles)).toBeCloseTo(0.5, 1);
  });
});

describe('selftest.consumer', () => {
  it('times the same chase consumed (as pchase) and unconsumed (the model’s issue cost, whatever serves the load)', async () => {
    const { channel } = await open(H100, 3);
    const args = chase({ space: 'global.cg', strideBytes: 128, warmup: true, samples: 512 });
    const result = await channel.request('selftest.consumer', args);
    expect(result.smId).toBe(0);
    expect(result.consumedLatenciesCycles).toHaveLength(512);
    expect(result.unconsumedLatenciesCycles).toHaveLength(512);
    expect(result.launch).toEqual({ carveoutPercent: 0, sharedBytesPerBlock: 512 * 4 + 4 + STATIC, flushedL2: false });
    const consumed = overheadFree(H100, result.consumedLatenciesCycles);
    const pchase = overheadFree(H100, (await channel.request('pchase', args)).latenciesCycles);
    expect(Math.abs(consumed - pchase) / pchase).toBeLessThan(0.1);
    // The stop clock that does not wait shows the issue cost alone, whatever serves the load.
    expect(Math.abs(overheadFree(H100, result.unconsumedLatenciesCycles) - H100.unconsumedCycles['global.cg'])).toBeLessThanOrEqual(1);
  });

  it('runs both walks in one launch, the second continuing the chain: cold and flushed, both read device memory', async () => {
    const { channel } = await open(H100, 4);
    const result = await channel.request(
      'selftest.consumer',
      chase({ space: 'global.cg', arrayBytes: 1 << 20, warmup: false, flushL2: true } as never),
    );
    expect(result.launch?.flushedL2).toBe(true);
    const consumed = overheadFree(H100, result.consumedLatenciesCycles);
    // Half the lines are homed near (near device-memory latency), half far.
    const memory = (H100.deviceMemory.nearLatencyCycles! + H100.deviceMemory.latencyCycles) / 2;
    expect(Math.abs(consumed - memory) / memory).toBeLessThan(0.05);
    expect(Math.abs(overheadFree(H100, result.unconsumedLatenciesCycles) - H100.unconsumedCycles['global.cg'])).toBeLessThanOrEqual(1);
    const texture = await channel.request('selftest.consumer', chase({ space: 'texture', warmup: true }));
    expect(Math.abs(overheadFree(H100, texture.unconsumedLatenciesCycles) - H100.unconsumedCycles.texture)).toBeLessThanOrEqual(1);
  });
});

describe('hello', () => {
  it.each([H100, A100])('reports the per-block shared reserve and the L2 fetch granularity of $id', async (model) => {
    const { channel } = await open(model);
    const [device] = (await channel.request('hello', {})).devices;
    expect(device).toMatchObject({
      reservedSharedMemPerBlockBytes: 1024,
      maxL2FetchGranularityBytes: model.device.maxL2FetchGranularityBytes,
    });
  });
});

describe('simulated device time', () => {
  it('keeps a closed channel’s time and loads but not its device: a sim daemon probing every minute must not grow', async () => {
    const { backend, channel } = await open(H100);
    await channel.request('pchase', chase({ arrayBytes: 64 * KIB, strideBytes: 128, samples: 256 }));
    const [seconds, loads] = [backend.simulatedDeviceSeconds(), backend.loadCount()];
    expect(backend.openChannelCount).toBe(1);
    await channel.close();
    await channel.close();
    expect(backend.openChannelCount).toBe(0);
    expect([backend.simulatedDeviceSeconds(), backend.loadCount()]).toEqual([seconds, loads]);
  });

  it('adds each launch’s overhead and its loads’ true latencies at the SM clock', async () => {
    const { backend, channel } = await open(H100);
    expect(backend.simulatedDeviceSeconds()).toBe(0);
    // All L1 hits after the warm-up lap: 512 warm-up loads (the chain's L2 hits and device-memory reads) + 256 timed hits.
    await channel.request('pchase', chase({ arrayBytes: 64 * KIB, strideBytes: 128, samples: 256 }));
    expect(backend.loadCount()).toBe(512 + 256);
    const seconds = backend.simulatedDeviceSeconds();
    const timedHits = (256 * H100.l1.hitLatencyCycles['global.ca']) / H100.clock.smClockHz;
    const warmupAtMost = (512 * H100.deviceMemory.latencyCycles) / H100.clock.smClockHz;
    expect(seconds).toBeGreaterThan(H100.launchOverheadS + timedHits);
    expect(seconds).toBeLessThan(H100.launchOverheadS + timedHits + warmupAtMost);
  });

  it('counts a batch as long as its slowest chaser, a bandwidth run as its modelled seconds, a flush as streaming twice the L2', async () => {
    const { backend, channel } = await open(H100);
    const batch = (sizes: number[]) =>
      channel.request('pchase.batch', {
        space: 'shared',
        arrayBytesList: sizes,
        strideBytes: 128,
        pattern: 'sequential',
        warmup: false,
        samples: 100,
      });
    let before = backend.simulatedDeviceSeconds();
    await batch([4096]);
    const one = backend.simulatedDeviceSeconds() - before;
    expect(one).toBeCloseTo(H100.launchOverheadS + (100 * H100.shared.latencyCycles) / H100.clock.smClockHz, 12);
    before = backend.simulatedDeviceSeconds();
    await batch([4096, 4096, 4096]);
    expect(backend.simulatedDeviceSeconds() - before).toBeCloseTo(one, 12);

    before = backend.simulatedDeviceSeconds();
    const run = await channel.request('bandwidth', {
      mode: 'read',
      arrayBytes: 1 << 30,
      blocks: 1056,
      threadsPerBlock: 1024,
      repetitions: 4,
    });
    expect(backend.simulatedDeviceSeconds() - before).toBeCloseTo(
      run.secondsPerRepetition.reduce((sum, value) => sum + value, 0),
      12,
    );

    before = backend.simulatedDeviceSeconds();
    await channel.request('pchase', chase({ space: 'shared', arrayBytes: 4096, warmup: false, samples: 100, flushL2: true }));
    expect(backend.simulatedDeviceSeconds() - before).toBeCloseTo(
      one + (2 * H100.device.l2CacheSizeBytes) / H100.deviceMemory.readBandwidthBytesPerS,
      12,
    );
  });
});
