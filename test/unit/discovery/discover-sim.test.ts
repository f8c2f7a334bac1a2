import { describe, expect, it } from 'vitest';
import { discover, reanalyse } from '../../../server/discovery/index.js';
import { ProbeError } from '../../../server/protocol/probe-error.js';
import {
  CHASE_KERNEL_STATIC_SHARED_BYTES,
  GPU_MODELS,
  l1CapacityBytes,
  SimulatedBackend,
  type GpuModel,
} from '../../../server/gpu/sim/index.js';
import type { DiscoveryOutcome } from '../../../server/model/document.js';
import { SHARED_H100_SEED, simulatedDiscovery, WHOLE_DISCOVERY_TIMEOUT_MS } from '../../helpers/simulated-discovery.js';

/** The oracle is the model the sim runs: what discovery finds must be its ground truth. */
const TOLERANCE = 0.02;

async function discoverOn(
  model: GpuModel,
  seed: number,
  options: Parameters<typeof discover>[1] = {},
): Promise<{ outcome: DiscoveryOutcome }> {
  const backend = new SimulatedBackend({ models: [model.id], seed, thread: true });
  const [gpu] = await backend.listDevices();
  const channel = await backend.open(gpu!);
  return { outcome: await discover(channel, options) };
}

/** Each model's whole discovery, run once per test run (the H100's is the one other files share). */
const wholeDiscovery = (model: GpuModel) =>
  simulatedDiscovery({ model: model.id, seed: model.id === 'h100-sxm5-80gb' ? SHARED_H100_SEED : 11 });
/**
 * Simulated GPU time a whole discovery may take (its kernels' time on the GPU modelled, ~0.13 s today): the
 * machine-independent form of "discovery is quick", where a wall-clock limit failed on a busy machine.
 */
const WHOLE_DISCOVERY_DEVICE_SECONDS = 1;

function expectNear(actual: number | undefined, truth: number, tolerance = TOLERANCE): void {
  expect(actual).toBeDefined();
  expect(Math.abs(actual! - truth) / truth).toBeLessThan(tolerance);
}

/** The L1 an SM has while the L1 size sweep runs: what the carveout for its 2048 samples leaves (server/gpu/sim/launch.ts). */
function l1Truth(model: GpuModel): number {
  return l1CapacityBytes(model, 2048 * 4 + 4 + CHASE_KERNEL_STATIC_SHARED_BYTES, 0);
}

describe.each(Object.values(GPU_MODELS))('discovery on the simulated $id', (model) => {
  it(
    'recovers every attribute of every element of the model: discrete ones exactly, sizes within 1 %',
    async () => {
      const { outcome, simulatedDeviceSeconds } = await wholeDiscovery(model);
      const e = outcome.elements;
      expect(Object.keys(e).sort()).toEqual(['constantL1', 'constantL15', 'deviceMemory', 'l1', 'l2', 'readOnly', 'shared', 'texture']);

      // The three paths through the L1: one cache, three load flavours.
      for (const [element, space] of [
        ['l1', 'global.ca'],
        ['texture', 'texture'],
        ['readOnly', 'readonly'],
      ] as const) {
        expectNear(e[element]?.size?.value, l1Truth(model), 0.01);
        expect(e[element]?.size?.confidence).toBeGreaterThanOrEqual(0.9);
        expect(e[element]?.lineSize?.value).toBe(model.l1.lineBytes);
        expect(e[element]?.fetchGranularity?.value).toBe(model.l1.sectorBytes);
        expectNear(e[element]?.latency?.mean, model.l1.hitLatencyCycles[space], 0.03);
      }
      expect(e.l1?.latency?.meanNs).toBeCloseTo((e.l1!.latency!.mean / model.clock.smClockHz) * 1e9, 0);

      // Constant caches: the L1 measured, the L1.5 bounded by the 64 KiB bank.
      expect(e.constantL1?.size?.value).toBe(model.constantL1.sizeBytes);
      expect(e.constantL1?.lineSize?.value).toBe(model.constantL1.lineBytes);
      expect(e.constantL1?.fetchGranularity?.value).toBe(model.constantL1.sectorBytes);
      expectNear(e.constantL1?.latency?.mean, model.constantL1.hitLatencyCycles, 0.03);
      expect(e.constantL15?.size).toMatchObject({ value: model.device.totalConstMemBytes, bound: 'lower' });
      expect(e.constantL15?.fetchGranularity?.value).toBe(model.constantL15.sectorBytes);
      expectNear(e.constantL15?.latency?.mean, model.constantL15.hitLatencyCycles, 0.03);

      expect(e.shared?.size).toEqual({ value: model.device.sharedMemPerMultiprocessorBytes, unit: 'bytes', source: 'api' });
      expectNear(e.shared?.latency?.mean, model.shared.latencyCycles, 0.03);

      // L2: segments, sector, fill and line.
      const { l2, deviceMemory } = e;
      expectNear(l2?.segmentSize?.value, model.l2.segment.sizeBytes, 0.01);
      // The segment is the capacity fit over the whole sweep (within 1 %); the amount the measured partition count.
      expect(l2?.segmentSize?.note).toMatch(/onset/);
      expect(l2?.amount).toMatchObject({ value: model.l2.segmentCount, per: 'gpu', source: 'microbenchmark' });
      expect(l2?.size).toEqual({ value: model.device.l2CacheSizeBytes, unit: 'bytes', source: 'api' });
      expect(l2?.lineSize?.value).toBe(model.l2.segment.lineBytes);
      expect(l2?.fetchGranularity?.value).toBe(model.l2.segment.sectorBytes);
      expect(l2?.fillGranularity?.value).toBe(model.device.maxL2FetchGranularityBytes);
      const expectedL2 = model.l2.farHomedHitsCostFar
        ? (model.l2.nearHitLatencyCycles + model.l2.farHitLatencyCycles) / 2
        : model.l2.nearHitLatencyCycles;
      expectNear(l2?.latency?.mean, expectedL2, 0.05);
      // Device memory: the cold walk's lines are homed half in each partition, near-homed misses faster where the model says so.
      const memory = model.deviceMemory;
      expectNear(
        deviceMemory?.latency?.mean,
        memory.nearLatencyCycles === undefined ? memory.latencyCycles : (memory.nearLatencyCycles + memory.latencyCycles) / 2,
        0.03,
      );

      // Miss penalties: the next level's latency minus this one's.
      expect(e.l1?.missPenalty).toMatchObject({
        source: 'derived',
        value: Math.round((l2!.latency!.mean - e.l1!.latency!.mean) * 100) / 100,
      });
      expect(e.constantL1?.missPenalty?.value).toBeCloseTo(e.constantL15!.latency!.mean - e.constantL1!.latency!.mean, 1);
      expect(l2?.missPenalty?.value).toBeCloseTo(deviceMemory!.latency!.mean - l2!.latency!.mean, 1);

      expect(outcome.carveout).toMatchObject({
        preferredSharedPercent: 0,
        reservedSharedBytesPerBlock: model.device.reservedSharedMemPerBlockBytes,
      });
      expect(outcome.clock?.clockReadOverheadCycles).toBe(model.clock.clockReadOverheadCycles);
      expect(outcome.device).toMatchObject({ name: model.name, multiprocessorCount: model.device.multiprocessorCount });
      expect(outcome.warnings).toEqual([]);
      expect(simulatedDeviceSeconds).toBeLessThan(WHOLE_DISCOVERY_DEVICE_SECONDS);
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );

  it(
    're-analyses its raw series into the same elements, and keeps them compact',
    async () => {
      const { outcome } = await wholeDiscovery(model);
      expect(reanalyse(outcome.raw).elements).toEqual(outcome.elements);
      expect(outcome.raw.map((series) => series.name)).toContain('l2.size.coarse');
      // Samples only, no index arrays (the compute strategy's placements and barrier samples add ~40 kB; the bandwidth
      // search's patience step and the hello's runtime flags a few kB more). An index array per chase would add megabytes.
      const partitions = outcome.raw.filter((series) => series.name === 'l2-partition');
      expect(JSON.stringify(outcome.raw.filter((series) => !partitions.includes(series))).length).toBeLessThan(6_150_000);
      // The L2 partitions: one latency per SM and chunk (two launches of 1024 chunks), nothing more.
      expect(partitions.length).toBe(2);
      expect(JSON.stringify(partitions).length).toBeLessThan(2 * 1024 * model.device.multiprocessorCount * 5);
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );
});

describe('discovery options', () => {
  const h100 = GPU_MODELS['h100-sxm5-80gb']!;

  it('measures only what is asked for and reports progress up to 1', async () => {
    const { outcome, progress: phases } = await simulatedDiscovery({ model: h100.id, seed: 32, only: ['l1'] });
    expect(Object.keys(outcome.elements)).toEqual(['l1']);
    expect(outcome.raw.some((series) => series.name.startsWith('l2.'))).toBe(false);
    const fractions = phases.map(([, fraction]) => fraction);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    expect(phases.at(-1)).toEqual(['done', 1]);
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    await expect(discoverOn(h100, 14, { signal: controller.signal })).rejects.toMatchObject({ code: 'cancelled' });
  });

  it('gives different measurements with different seeds but the same answers', async () => {
    const [a, b] = await Promise.all([
      simulatedDiscovery({ model: h100.id, seed: 32, only: ['l1'] }),
      simulatedDiscovery({ model: h100.id, seed: 16, only: ['l1'] }),
    ]);
    expect(a.outcome.raw).not.toEqual(b.outcome.raw);
    expectNear(a.outcome.elements.l1?.size?.value, b.outcome.elements.l1!.size!.value, 0.01);
  });
});

describe('discovery when the probe refuses a benchmark', () => {
  it(
    'skips the refused element with a warning and measures the rest',
    async () => {
      const model = GPU_MODELS['a100-40gb']!;
      const backend = new SimulatedBackend({ models: [model.id], seed: 17, thread: true });
      const [gpu] = await backend.listDevices();
      const sim = await backend.open(gpu!);
      const refusingBatch: typeof sim = {
        request: (op, args, options) =>
          op === 'pchase.batch' ? Promise.reject(new ProbeError('unsupported', 'no batch here')) : sim.request(op, args, options),
        close: () => sim.close(),
      };
      const outcome = await discover(refusingBatch, {});
      expect(outcome.elements.l1).toBeUndefined();
      expect(outcome.elements.l2?.segmentSize).toBeDefined();
      expect(outcome.warnings.some((warning) => warning.startsWith('l1: skipped') && warning.includes('unsupported'))).toBe(true);
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );

  it('fails the discovery on a probe fault', async () => {
    const broken = { request: () => Promise.reject(new ProbeError('kernel_fault', 'illegal address')), close: async () => undefined };
    await expect(discover(broken, {})).rejects.toMatchObject({ code: 'kernel_fault' });
  });
});
