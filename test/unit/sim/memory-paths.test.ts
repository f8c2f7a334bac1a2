import { describe, expect, it } from 'vitest';
import type { MemorySpace } from '../../../server/protocol/ops.js';
import { GPU_MODELS, l1CapacityBytes, SimulatedDevice, type GpuModel } from '../../../server/gpu/sim/index.js';
import { Prng } from '../../../server/gpu/sim/prng.js';

/** Each NVIDIA path's hits and misses on true latencies (no clock noise): SimulatedDevice driven directly. */
const H100 = GPU_MODELS['h100-sxm5-80gb']!;
const A100 = GPU_MODELS['a100-40gb']!;
const KIB = 1024;

function device(model: GpuModel = H100): SimulatedDevice {
  return new SimulatedDevice(model, new Prng(1));
}

/** Loads at base, base + stride, … over `bytes`: their true latencies. */
function sweep(sim: SimulatedDevice, space: MemorySpace, base: number, bytes: number, strideBytes: number, smId = 0): number[] {
  const latencies: number[] = [];
  for (let at = base; at < base + bytes; at += strideBytes) latencies.push(sim.loadLatencyCycles(smId, space, at));
  return latencies;
}

const share = (latencies: readonly number[], cycles: number) => latencies.filter((value) => value === cycles).length / latencies.length;
/** Device-memory reads: near-homed lines at the near latency, far-homed ones at the far latency. */
const DRAM = [H100.deviceMemory.nearLatencyCycles!, H100.deviceMemory.latencyCycles];
const dramShare = (latencies: readonly number[]) => share(latencies, DRAM[0]!) + share(latencies, DRAM[1]!);

/** An address homed on `segment`, at or after `from`. */
function homedOn(sim: SimulatedDevice, segment: number, from = 0): number {
  let at = from;
  while (sim.homeSegment(at) !== segment) at += sim.model.l2.homeInterleaveBytes;
  return at;
}

describe('L1 (per SM; global.ca, read-only and texture)', () => {
  it('fills one 32 B sector per miss: the same sector hits, the next sector of the line misses', () => {
    const sim = device();
    sim.flushL2();
    const l2OrBeyond = sim.loadLatencyCycles(0, 'global.ca', 0);
    expect(l2OrBeyond).toBeGreaterThan(H100.l1.hitLatencyCycles['global.ca']);
    expect(sim.loadLatencyCycles(0, 'global.ca', 28)).toBe(H100.l1.hitLatencyCycles['global.ca']);
    expect(sim.loadLatencyCycles(0, 'global.ca', 32)).not.toBe(H100.l1.hitLatencyCycles['global.ca']);
    // A cold 32 B-stride walk never hits the L1; a 4 B-stride one hits 7 loads in 8.
    expect(share(sweep(sim, 'global.ca', 64 * KIB, 4 * KIB, 32), H100.l1.hitLatencyCycles['global.ca'])).toBe(0);
    expect(share(sweep(sim, 'global.ca', 128 * KIB, 4 * KIB, 4), H100.l1.hitLatencyCycles['global.ca'])).toBe(7 / 8);
  });

  it('is one cache for .ca, read-only and texture, each with its own hit latency', () => {
    const sim = device();
    sim.loadLatencyCycles(0, 'global.ca', 4096);
    expect(sim.loadLatencyCycles(0, 'texture', 4096)).toBe(H100.l1.hitLatencyCycles.texture);
    expect(sim.loadLatencyCycles(0, 'readonly', 4096)).toBe(H100.l1.hitLatencyCycles.readonly);
    expect(sim.loadLatencyCycles(1, 'global.ca', 4096)).not.toBe(H100.l1.hitLatencyCycles['global.ca']);
  });

  it('starts every launch empty, with the capacity the launch’s carveout leaves', () => {
    const sim = device();
    expect(sim.l1CapacityOf(0)).toBe(l1CapacityBytes(H100, 0, 0));
    sweep(sim, 'global.ca', 0, 8 * KIB, 32);
    expect(share(sweep(sim, 'global.ca', 0, 8 * KIB, 32), H100.l1.hitLatencyCycles['global.ca'])).toBe(1);
    sim.startLaunch([0], sim.l1CapacityOf(0));
    expect(share(sweep(sim, 'global.ca', 0, 8 * KIB, 32), H100.l1.hitLatencyCycles['global.ca'])).toBe(0);

    // 240 KiB of L1 (a 16 KiB carveout): a 244 KiB array overfills some sets; with 248 KiB it stays whole.
    const small = l1CapacityBytes(H100, 2048 * 4 + 4, 0);
    expect(small).toBe(240 * KIB);
    const warmHits = (capacity: number) => {
      sim.startLaunch([0], capacity);
      expect(sim.l1CapacityOf(0)).toBe(capacity);
      sweep(sim, 'global.ca', 1 << 20, 244 * KIB, 128);
      return share(sweep(sim, 'global.ca', 1 << 20, 244 * KIB, 128), H100.l1.hitLatencyCycles['global.ca']);
    };
    expect(warmHits(small)).toBeLessThan(0.95);
    expect(warmHits(l1CapacityBytes(H100, 256 * 4 + 4, 0))).toBe(1);
    expect(warmHits(small)).toBeLessThan(0.95);
  });
});

describe('constant caches (per SM)', () => {
  it('constant L1 fetches 64 B lines, the L1.5 256 B lines, then the L2', () => {
    const sim = device();
    sim.flushL2();
    const base = 1 << 20;
    expect(DRAM).toContain(sim.loadLatencyCycles(0, 'constant', base));
    expect(sim.loadLatencyCycles(0, 'constant', base + 60)).toBe(H100.constantL1.hitLatencyCycles);
    expect(sim.loadLatencyCycles(0, 'constant', base + 64)).toBe(H100.constantL15.hitLatencyCycles);
    expect(sim.loadLatencyCycles(0, 'constant', base + 192)).toBe(H100.constantL15.hitLatencyCycles);
    expect(sim.loadLatencyCycles(0, 'constant', base + 256)).toBeGreaterThan(H100.constantL15.hitLatencyCycles);
  });

  it('start empty at every launch', () => {
    const sim = device();
    sim.loadLatencyCycles(0, 'constant', 0);
    expect(sim.loadLatencyCycles(0, 'constant', 0)).toBe(H100.constantL1.hitLatencyCycles);
    sim.startLaunch([0], sim.l1CapacityOf(0));
    expect(sim.loadLatencyCycles(0, 'constant', 0)).toBeGreaterThan(H100.constantL15.hitLatencyCycles);
  });
});

describe('shared memory', () => {
  it('has one fixed latency', () => {
    expect(new Set(sweep(device(), 'shared', 0, 64 * KIB, 128))).toEqual(new Set([H100.shared.latencyCycles]));
  });
});

describe('L2', () => {
  it('after a flush, fills device-memory misses in 64 B chunks: 50 % hits at a 32 B stride, none at 64 B', () => {
    for (const [stride, hitShare] of [
      [32, 0.5],
      [64, 0],
      [128, 0],
    ] as const) {
      const sim = device();
      sim.flushL2();
      const latencies = sweep(sim, 'global.cg', 0, 64 * KIB, stride);
      expect(dramShare(latencies), `stride ${stride}`).toBe(1 - hitShare);
    }
  });

  it('with a 128 B fetch granularity: 75 / 50 / 0 % hits at 32 / 64 / 128 B strides', () => {
    const model: GpuModel = { ...H100, device: { ...H100.device, maxL2FetchGranularityBytes: 128 } };
    for (const [stride, hitShare] of [
      [32, 0.75],
      [64, 0.5],
      [128, 0],
    ] as const) {
      const sim = device(model);
      sim.flushL2();
      expect(dramShare(sweep(sim, 'global.cg', 0, 64 * KIB, stride)), `stride ${stride}`).toBe(1 - hitShare);
    }
  });

  it('serves a chain its build left in the L2 unless flushed, at near or far latency by home segment', () => {
    const sim = device();
    for (let at = 0; at < 64 * KIB; at += 32) sim.writeThroughL2(at);
    const latencies = sweep(sim, 'global.cg', 0, 64 * KIB, 32);
    // Far-homed lines come from their home partition (the near copy is made by this first read).
    const farPartition = H100.l2.farPartitionHitLatencyCycles!;
    expect(share(latencies, H100.l2.nearHitLatencyCycles) + share(latencies, farPartition)).toBe(1);
    expect(share(latencies, farPartition)).toBeGreaterThan(0.3);
    for (let at = 0; at < 64 * KIB; at += 32) sim.writeThroughL2(at);
    sim.flushL2();
    expect(dramShare(sweep(sim, 'global.cg', 0, 64 * KIB, 32))).toBe(0.5);
  });

  it('homes 256 B chunks on the segments in a hashed order, every segment once per group', () => {
    const sim = device();
    const homes = Array.from({ length: 256 }, (_, chunk) => sim.homeSegment(chunk * H100.l2.homeInterleaveBytes));
    for (let group = 0; group < homes.length; group += 2) expect(new Set(homes.slice(group, group + 2)).size).toBe(2);
    const plain = homes.every((home, chunk) => home === chunk % 2);
    expect(plain).toBe(false);
    // Within a chunk, one home.
    expect(sim.homeSegment(homedOn(sim, 1) + H100.l2.homeInterleaveBytes - 4)).toBe(1);
  });

  it('charges the far latency on any hit of a far-homed line (H100-like), and moves it to the reader’s near segment where the model says so', () => {
    const sim = device({ ...H100, l2: { ...H100.l2, farLineResidence: 'near-only' } });
    sim.flushL2();
    const nearSm = 0;
    const farSm = H100.device.multiprocessorCount - 1;
    expect(sim.segmentOfSm(nearSm)).toBe(0);
    expect(sim.segmentOfSm(farSm)).toBe(1);
    const far = homedOn(sim, 1);
    const near = homedOn(sim, 0);
    expect(sim.loadLatencyCycles(nearSm, 'global.cg', near)).toBe(H100.deviceMemory.nearLatencyCycles);
    expect(sim.loadLatencyCycles(nearSm, 'global.cg', near)).toBe(H100.l2.nearHitLatencyCycles);
    sim.writeThroughL2(far);
    expect(sim.loadLatencyCycles(nearSm, 'global.cg', far)).toBe(H100.l2.farHitLatencyCycles); // from its home
    expect(sim.loadLatencyCycles(nearSm, 'global.cg', far)).toBe(H100.l2.farHitLatencyCycles); // now in the near segment
    expect(sim.loadLatencyCycles(farSm, 'global.cg', far)).toBe(H100.deviceMemory.nearLatencyCycles); // gone from its home
  });

  it('holds a line read by both groups in both partitions, and serves far-partition hits and far misses at their own latencies (H100)', () => {
    const sim = device();
    sim.flushL2();
    const far = homedOn(sim, 1);
    const farSm = H100.device.multiprocessorCount - 1;
    expect(sim.loadLatencyCycles(0, 'global.cg', far)).toBe(H100.deviceMemory.latencyCycles); // far-homed miss
    expect(sim.loadLatencyCycles(0, 'global.cg', far)).toBe(H100.l2.farHitLatencyCycles); // the near copy
    expect(sim.loadLatencyCycles(farSm, 'global.cg', far)).toBe(H100.l2.nearHitLatencyCycles); // its home kept it too
  });

  it('keeps a far-homed line in its home segment too where the model says so (A100-like)', () => {
    const sim = device(A100);
    sim.flushL2();
    const far = homedOn(sim, 1);
    sim.writeThroughL2(far);
    expect(sim.loadLatencyCycles(0, 'global.cg', far)).toBe(A100.l2.farPartitionHitLatencyCycles); // from its home partition
    expect(sim.loadLatencyCycles(0, 'global.cg', far)).toBe(A100.l2.farHitLatencyCycles); // the near copy
    expect(sim.loadLatencyCycles(A100.device.multiprocessorCount - 1, 'global.cg', far)).toBe(A100.l2.nearHitLatencyCycles);
  });
});
