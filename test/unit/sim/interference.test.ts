import { describe, expect, it } from 'vitest';
import type { ProbeChannel } from '../../../server/gpu/backend.js';
import { GPU_MODELS, SimulatedBackend } from '../../../server/gpu/sim/index.js';
import { SetAssociativeCache } from '../../../server/gpu/sim/set-associative-cache.js';

const H100 = GPU_MODELS['h100-sxm5-80gb']!;
const MIB = 1024 * 1024;

async function open(seed: number, options: { interference?: number; model?: string } = {}): Promise<ProbeChannel> {
  const backend = new SimulatedBackend({
    models: [options.model ?? H100.id],
    seed,
    ...(options.interference === undefined ? {} : { interference: options.interference }),
  });
  const [gpu] = await backend.listDevices();
  return backend.open(gpu!);
}

/** An L2-resident .cg chase from SM 0, warmed, 4096 loads timed: what the L2 sweeps measure. */
async function l2Chase(channel: ProbeChannel): Promise<number[]> {
  const result = await channel.request('pchase', {
    space: 'global.cg',
    arrayBytes: 8 * MIB,
    strideBytes: 128,
    pattern: 'sequential',
    warmup: true,
    samples: 4096,
    smId: 0,
  });
  return result.latenciesCycles;
}

async function bandwidthSeconds(channel: ProbeChannel): Promise<number[]> {
  const result = await channel.request('bandwidth', {
    mode: 'read',
    arrayBytes: 1024 * MIB,
    blocks: 264,
    threadsPerBlock: 1024,
    repetitions: 64,
  });
  return result.secondsPerRepetition;
}

const missCycles = (H100.l2.farHitLatencyCycles + H100.deviceMemory.latencyCycles) / 2;
const stallCycles = 10 * H100.deviceMemory.latencyCycles;

describe('the simulated tenant (interference)', () => {
  it('at intensity 0 measures bit for bit what the idle simulator measures', async () => {
    const [idle, zero, zeroBySuffix] = await Promise.all([open(5), open(5, { interference: 0 }), open(5, { model: `${H100.id}-busy0` })]);
    const idleRun = [await l2Chase(idle), await bandwidthSeconds(idle)];
    expect([await l2Chase(zero), await bandwidthSeconds(zero)]).toEqual(idleRun);
    expect([await l2Chase(zeroBySuffix), await bandwidthSeconds(zeroBySuffix)]).toEqual(idleRun);
  });

  it('is seeded: the same seed and intensity measure the same, another seed differently', async () => {
    const [a, b, c] = await Promise.all([open(6, { interference: 0.5 }), open(6, { interference: 0.5 }), open(7, { interference: 0.5 })]);
    const [first, second, other] = [await l2Chase(a), await l2Chase(b), await l2Chase(c)];
    expect(second).toEqual(first);
    expect(other).not.toEqual(first);
  });

  it('takes time slices: timed loads that span one stall far past device memory, and bandwidth repetitions take longer', async () => {
    const idle = await open(8);
    const busy = await open(8, { interference: 1 });
    const stalled = (samples: number[]) => samples.filter((cycles) => cycles > stallCycles).length;
    let idleStalls = 0;
    let busyStalls = 0;
    for (let launch = 0; launch < 8; launch += 1) {
      idleStalls += stalled(await l2Chase(idle));
      busyStalls += stalled(await l2Chase(busy));
    }
    expect(idleStalls).toBe(0);
    expect(busyStalls).toBeGreaterThan(0);
    const [idleSeconds, busySeconds] = [await bandwidthSeconds(idle), await bandwidthSeconds(busy)];
    expect(Math.max(...busySeconds)).toBeGreaterThan(1.5 * Math.max(...idleSeconds));
  });

  it('evicts L2 lines: an L2-resident chase misses more, the more intense the tenant', async () => {
    const misses = async (intensity: number) => {
      const channel = await open(9, { interference: intensity });
      let count = 0;
      for (let launch = 0; launch < 8; launch += 1) count += (await l2Chase(channel)).filter((cycles) => cycles > missCycles).length;
      return count;
    };
    const [idle, light, heavy] = [await misses(0), await misses(0.25), await misses(1)];
    expect(light).toBeGreaterThan(idle);
    expect(heavy).toBeGreaterThan(light);
  });

  it('is asked for by an option or a model id suffix in percent; anything else is a configuration error', () => {
    expect(() => new SimulatedBackend({ models: [`${H100.id}-busy50`] })).not.toThrow();
    expect(() => new SimulatedBackend({ models: [H100.id], interference: 1.5 })).toThrow(/0\.\.1/);
    expect(() => new SimulatedBackend({ models: [`${H100.id}-busy150`] })).toThrow(/percentage/);
    expect(() => new SimulatedBackend({ models: ['rtx-9090-busy10'] })).toThrow(/unknown simulated GPU model "rtx-9090"/);
  });
});

describe('SetAssociativeCache.evictShare', () => {
  const geometry = { sizeBytes: 64 * 1024, lineBytes: 128, sectorBytes: 128, ways: 8 };
  const lines = geometry.sizeBytes / geometry.lineBytes;
  const fill = (cache: SetAssociativeCache) => {
    for (let line = 0; line < lines; line += 1) cache.access(line * geometry.lineBytes);
  };
  const present = (cache: SetAssociativeCache) =>
    Array.from({ length: lines }, (_, line) => cache.contains(line * geometry.lineBytes)).filter(Boolean).length;

  it('takes about that share of the lines, lazily and by seed; lines touched afterwards stay', () => {
    const cache = new SetAssociativeCache(geometry);
    fill(cache);
    expect(present(cache)).toBe(lines);
    cache.evictShare(0.5, 123);
    const left = present(cache);
    expect(left).toBeGreaterThan(lines * 0.4);
    expect(left).toBeLessThan(lines * 0.6);

    const again = new SetAssociativeCache(geometry);
    fill(again);
    again.evictShare(0.5, 123);
    expect(present(again)).toBe(left);

    fill(cache);
    expect(present(cache)).toBe(lines);
    cache.evictShare(1, 7);
    expect(present(cache)).toBe(0);
    cache.evictShare(0, 8);
    fill(cache);
    expect(present(cache)).toBe(lines);
  });
});
