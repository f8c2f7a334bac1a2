import { describe, expect, it } from 'vitest';
import type { ProbeChannel } from '../../../server/gpu/backend.js';
import { ProbeError } from '../../../server/protocol/probe-error.js';
import type { GpuIdentity } from '../../../server/model/gpu.js';
import type { PchaseArgs } from '../../../server/protocol/ops.js';
import { GPU_MODELS, l1CapacityBytes, SimulatedBackend, SimulatorConfigError, type GpuModel } from '../../../server/gpu/sim/index.js';
import { median } from '../../../server/analysis/index.js';
import { MAX_SAMPLES } from '../../../server/protocol/limits.js';

const H100 = GPU_MODELS['h100-sxm5-80gb']!;
const A100 = GPU_MODELS['a100-40gb']!;

async function openSim(model: GpuModel, seed?: number): Promise<ProbeChannel> {
  const backend = new SimulatedBackend(seed === undefined ? { models: [model.id] } : { models: [model.id], seed });
  const [gpu] = await backend.listDevices();
  return backend.open(gpu!);
}

function chase(overrides: Partial<PchaseArgs>): PchaseArgs {
  return { space: 'global.ca', arrayBytes: 64 * 1024, strideBytes: 32, pattern: 'sequential', warmup: true, samples: 256, ...overrides };
}

/** The L1 a global chase of `samples` timed loads gets (the default carveout). */
function l1Bytes(model: GpuModel, samples = 256): number {
  return l1CapacityBytes(model, samples * 4 + 4, 0);
}

/** Observed median minus the clock-read overhead: the load latency the model was asked for. */
function loadLatency(model: GpuModel, samples: number[]): number {
  return median(samples) - model.clock.clockReadOverheadCycles;
}

describe('SimulatedBackend', () => {
  it('lists GPUs with stable, well-formed UUIDs', async () => {
    const backend = new SimulatedBackend({ models: ['h100-sxm5-80gb', 'a100-40gb'] });
    const devices = await backend.listDevices();
    expect(devices.map((gpu) => gpu.name)).toEqual([H100.name, A100.name]);
    for (const gpu of devices) expect(gpu.uuid).toMatch(/^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(new Set(devices.map((gpu) => gpu.uuid)).size).toBe(2);
    expect(await new SimulatedBackend({ models: ['h100-sxm5-80gb', 'a100-40gb'] }).listDevices()).toEqual(devices);
    expect(devices[0]!.driverVersion).toMatch(/^sim-/);
    expect(backend.kind).toBe('sim');
    expect(backend.simulated).toBe(true);
  });

  it('refuses unknown model ids with a stable code', () => {
    expect(() => new SimulatedBackend({ models: ['v100'] })).toThrow(SimulatorConfigError);
  });

  it('opens a foreign GPU by its name and reports that GPU in hello', async () => {
    const backend = new SimulatedBackend({ models: [] });
    const gpu: GpuIdentity = {
      uuid: 'GPU-11111111-2222-3333-4444-555555555555',
      index: 3,
      name: 'NVIDIA A100-PCIE-40GB',
      vendor: 'nvidia',
      pciBusId: '00000000:3B:00.0',
      driverVersion: '580.95.05',
    };
    const hello = await (await backend.open(gpu)).request('hello', {});
    expect(hello.devices).toHaveLength(1);
    expect(hello.devices[0]).toMatchObject({
      uuid: gpu.uuid,
      index: 3,
      pciBusId: gpu.pciBusId,
      multiprocessorCount: A100.device.multiprocessorCount,
    });
    await expect(backend.open({ ...gpu, name: 'NVIDIA GeForce RTX 4090' })).rejects.toMatchObject({ code: 'unsupported' });
  });

  it('is reproducible with a seed and differs without one', async () => {
    const run = async (channel: ProbeChannel) => (await channel.request('pchase', chase({ samples: 64 }))).latenciesCycles;
    expect(await run(await openSim(H100, 42))).toEqual(await run(await openSim(H100, 42)));
    expect(await run(await openSim(H100))).not.toEqual(await run(await openSim(H100)));
  });

  /** Loads within 8 % of the near or the far device-memory latency (near- and far-homed misses). */
  const dramShare = (samples: number[]) =>
    samples.filter((value) =>
      [H100.deviceMemory.nearLatencyCycles!, H100.deviceMemory.latencyCycles].some(
        (cycles) => Math.abs(value - H100.clock.clockReadOverheadCycles - cycles) < cycles * 0.08,
      ),
    ).length / samples.length;

  it('serves L1 hits for a resident array and L2 latencies for .cg', async () => {
    const channel = await openSim(H100, 1);
    const ca = await channel.request('pchase', chase({}));
    expect(loadLatency(H100, ca.latenciesCycles)).toBeCloseTo(H100.l1.hitLatencyCycles['global.ca'], 0);
    // Every .cg load is an L2 hit, near or far by its home segment (in 256 B chunks, so both classes show).
    const cg = await channel.request('pchase', chase({ space: 'global.cg' }));
    const near = cg.latenciesCycles.filter(
      (value) => Math.abs(value - H100.clock.clockReadOverheadCycles - H100.l2.nearHitLatencyCycles) < 12,
    );
    const far = cg.latenciesCycles.filter(
      (value) => Math.abs(value - H100.clock.clockReadOverheadCycles - H100.l2.farHitLatencyCycles) < 12,
    );
    expect(near.length / cg.latenciesCycles.length).toBeGreaterThan(0.25);
    expect(far.length / cg.latenciesCycles.length).toBeGreaterThan(0.25);
    expect((near.length + far.length) / cg.latenciesCycles.length).toBeGreaterThan(0.97);
    const cold = await channel.request('pchase', chase({ warmup: false, strideBytes: 128, flushL2: true }));
    expect(dramShare(cold.latenciesCycles)).toBeGreaterThan(0.97);
  });

  it('misses in L1 once the array exceeds it, and in L2 once it exceeds a segment', async () => {
    const channel = await openSim(H100, 2);
    const overL1 = await channel.request('pchase', chase({ arrayBytes: l1Bytes(H100) + 8 * 1024 }));
    expect(loadLatency(H100, overL1.latenciesCycles)).toBeGreaterThan(H100.l2.nearHitLatencyCycles * 0.9);
    const l2 = (arrayBytes: number) =>
      channel.request('pchase', chase({ space: 'global.cg', arrayBytes: Math.round(arrayBytes), strideBytes: 128, samples: 1024 }));
    const share = (samples: number[], cycles: number) =>
      samples.filter((value) => Math.abs(value - H100.clock.clockReadOverheadCycles - cycles) < cycles * 0.08).length / samples.length;
    // H100: past one segment no near-partition hit is left, but far-homed lines still hit their home partition, slower.
    const overSegment = (await l2(H100.l2.segment.sizeBytes * 1.1)).latenciesCycles;
    expect(share(overSegment, H100.l2.nearHitLatencyCycles) + share(overSegment, H100.l2.farHitLatencyCycles)).toBeLessThan(0.02);
    expect(share(overSegment, H100.l2.farPartitionHitLatencyCycles!)).toBeGreaterThan(0.25);
    const overL2 = (await l2(H100.device.l2CacheSizeBytes * 1.2)).latenciesCycles;
    expect(dramShare(overL2)).toBeGreaterThan(0.97);
  });

  it('keeps far hits past one segment where far-homed lines also stay in their home segment (A100-like)', async () => {
    expect(A100.l2.farLineResidence).toBe('near-and-home');
    const channel = await openSim(A100, 2);
    const share = (samples: number[], cycles: number) =>
      samples.filter((value) => Math.abs(value - A100.clock.clockReadOverheadCycles - cycles) < cycles * 0.08).length / samples.length;
    const args = chase({
      space: 'global.cg',
      arrayBytes: Math.round((A100.l2.segment.sizeBytes * 1.1) / 128) * 128,
      strideBytes: 128,
      samples: 1024,
    });
    const overSegment = (await channel.request('pchase', args)).latenciesCycles;
    expect(share(overSegment, A100.l2.nearHitLatencyCycles)).toBeLessThan(0.02);
    expect(share(overSegment, A100.l2.farPartitionHitLatencyCycles!)).toBeGreaterThan(0.25);
  });

  it('serves shared memory and the constant caches at their latencies', async () => {
    const channel = await openSim(A100, 3);
    const shared = await channel.request('pchase', chase({ space: 'shared', arrayBytes: 4096 }));
    expect(loadLatency(A100, shared.latenciesCycles)).toBe(A100.shared.latencyCycles);
    const constL1 = await channel.request('pchase', chase({ space: 'constant', arrayBytes: 1024, strideBytes: 64 }));
    expect(loadLatency(A100, constL1.latenciesCycles)).toBeCloseTo(A100.constantL1.hitLatencyCycles, 0);
    const constL15 = await channel.request('pchase', chase({ space: 'constant', arrayBytes: 32 * 1024, strideBytes: 64 }));
    expect(loadLatency(A100, constL15.latenciesCycles)).toBeCloseTo(A100.constantL15.hitLatencyCycles, -1);
  });

  it('adds rare large outliers on top of the noise', async () => {
    const channel = await openSim(H100, 4);
    // Three requests at the protocol's sample limit: enough loads to see a rare event.
    const latenciesCycles: number[] = [];
    for (let i = 0; i < 3; i++) latenciesCycles.push(...(await channel.request('pchase', chase({ samples: MAX_SAMPLES }))).latenciesCycles);
    const outliers = latenciesCycles.filter((value) => value > H100.l1.hitLatencyCycles['global.ca'] + H100.noise.outlierMinCycles * 0.9);
    expect(outliers.length / latenciesCycles.length).toBeGreaterThan(H100.noise.outlierProbability / 2);
    expect(outliers.length / latenciesCycles.length).toBeLessThan(H100.noise.outlierProbability * 2);
  });

  it('runs batch chasers on distinct SMs with independent L1s', async () => {
    const channel = await openSim(H100, 5);
    const sizes = [16 * 1024, 128 * 1024, l1Bytes(H100) * 2];
    const { series } = await channel.request('pchase.batch', {
      space: 'global.ca',
      arrayBytesList: sizes,
      strideBytes: 32,
      pattern: 'sequential',
      warmup: true,
      samples: 256,
    });
    expect(series.map((entry) => entry.arrayBytes)).toEqual(sizes);
    expect(new Set(series.map((entry) => entry.smId)).size).toBe(sizes.length);
    // 16 + 128 KiB together would not matter on one SM, but the 2×L1 array would thrash a shared L1.
    expect(loadLatency(H100, series[1]!.latenciesCycles)).toBeCloseTo(H100.l1.hitLatencyCycles['global.ca'], 0);
    expect(loadLatency(H100, series[2]!.latenciesCycles)).toBeGreaterThan(H100.l2.nearHitLatencyCycles * 0.9);
  });

  it('shares the L1 between .ca, read-only and texture on one SM, not across SMs', async () => {
    const channel = await openSim(H100, 6);
    // Two chasers of 512 samples in one block: the pair's carveout.
    const arrayBytes = Math.floor((l1CapacityBytes(H100, 2 * (512 * 4 + 4), 0) * 0.9) / 32) * 32;
    const pair = (placement: 'same-sm' | 'different-sm') =>
      channel.request('pchase.pair', {
        first: { space: 'texture', arrayBytes, strideBytes: 32 },
        second: { space: 'global.ca', arrayBytes, strideBytes: 32 },
        placement,
        samples: 512,
      });
    const same = await pair('same-sm');
    expect(same.firstSmId).toBe(same.secondSmId);
    expect(loadLatency(H100, same.firstLatenciesCycles)).toBeGreaterThan(H100.l2.nearHitLatencyCycles * 0.9);
    const apart = await pair('different-sm');
    expect(apart.firstSmId).not.toBe(apart.secondSmId);
    expect(loadLatency(H100, apart.firstLatenciesCycles)).toBeCloseTo(H100.l1.hitLatencyCycles.texture, 0);
    expect(apart.secondLatenciesCycles).toHaveLength(512);
  });

  it('times bandwidth runs plausibly: L2-resident faster than device memory', async () => {
    const channel = await openSim(A100, 7);
    const run = (arrayBytes: number) =>
      channel.request('bandwidth', { mode: 'read', arrayBytes, blocks: 1024, threadsPerBlock: 1024, repetitions: 5 });
    const small = await run(16 * 1024 * 1024);
    const large = await run(1024 * 1024 * 1024);
    expect(small.secondsPerRepetition).toHaveLength(5);
    const rate = (result: typeof small) => result.bytesPerRepetition / median(result.secondsPerRepetition);
    expect(rate(large)).toBeGreaterThan(A100.deviceMemory.readBandwidthBytesPerS * 0.9);
    expect(rate(large)).toBeLessThan(A100.deviceMemory.readBandwidthBytesPerS * 1.1);
    expect(rate(small)).toBeGreaterThan(rate(large));
  });

  it('calibrates the clock-read overhead and the SM clock', async () => {
    const calibration = await (await openSim(A100, 8)).request('calibrate', { samples: 100 });
    expect(calibration.clockReadOverheadCycles).toBe(A100.clock.clockReadOverheadCycles);
    expect(calibration.smClockHz / A100.clock.smClockHz).toBeCloseTo(1, 2);
  });
});
