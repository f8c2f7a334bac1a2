import { describe, expect, it } from 'vitest';
import type { ProbeChannel } from '../../../server/gpu/backend.js';
import { ProbeError } from '../../../server/protocol/probe-error.js';
import { PROBE_OPS, type ProbeOp } from '../../../server/protocol/ops.js';
import { GPU_MODELS, SimulatedBackend } from '../../../server/gpu/sim/index.js';

const H100 = GPU_MODELS['h100-sxm5-80gb']!;

async function openH100(): Promise<ProbeChannel> {
  const backend = new SimulatedBackend({ models: [H100.id], seed: 9 });
  const [gpu] = await backend.listDevices();
  return backend.open(gpu!);
}

const chase = { space: 'global.ca', arrayBytes: 4096, strideBytes: 32, pattern: 'sequential', warmup: true, samples: 16 };
const chaser = { space: 'global.ca', arrayBytes: 4096, strideBytes: 32 };

const refused: Array<[string, string, unknown, string]> = [
  ['zero array', 'pchase', { ...chase, arrayBytes: 0 }, 'bad_request'],
  ['negative array', 'pchase', { ...chase, arrayBytes: -4096 }, 'bad_request'],
  ['stride not a multiple of 4', 'pchase', { ...chase, strideBytes: 30 }, 'bad_request'],
  ['stride larger than the array', 'pchase', { ...chase, strideBytes: 8192 }, 'bad_request'],
  ['unknown space', 'pchase', { ...chase, space: 'global.cs' }, 'bad_request'],
  ['unknown pattern', 'pchase', { ...chase, pattern: 'zigzag' }, 'bad_request'],
  ['zero samples', 'pchase', { ...chase, samples: 0 }, 'bad_request'],
  ['too many samples', 'pchase', { ...chase, samples: 1_000_001 }, 'bad_request'],
  ['fractional samples', 'pchase', { ...chase, samples: 1.5 }, 'bad_request'],
  ['warmup not a boolean', 'pchase', { ...chase, warmup: 'yes' }, 'bad_request'],
  ['SM out of range', 'pchase', { ...chase, smId: H100.device.multiprocessorCount }, 'bad_request'],
  ['array beyond device memory', 'pchase', { ...chase, arrayBytes: H100.device.totalMemoryBytes + 4096 }, 'out_of_memory'],
  ['constant array beyond constant memory', 'pchase', { ...chase, space: 'constant', arrayBytes: 128 * 1024 }, 'bad_request'],
  ['shared array beyond shared memory', 'pchase', { ...chase, space: 'shared', arrayBytes: 1024 * 1024 }, 'bad_request'],
  ['args not an object', 'pchase', [1, 2], 'bad_request'],
  ['empty batch', 'pchase.batch', { ...chase, arrayBytesList: [] }, 'bad_request'],
  [
    'batch larger than the SM count',
    'pchase.batch',
    { ...chase, arrayBytesList: Array(H100.device.multiprocessorCount + 1).fill(4096) },
    'bad_request',
  ],
  ['batch with a bad size', 'pchase.batch', { ...chase, arrayBytesList: [4096, -1] }, 'bad_request'],
  ['batch beyond device memory', 'pchase.batch', { ...chase, arrayBytesList: [H100.device.totalMemoryBytes, 4096] }, 'out_of_memory'],
  ['pair without second', 'pchase.pair', { first: chaser, placement: 'same-sm', samples: 16 }, 'bad_request'],
  ['pair with unknown placement', 'pchase.pair', { first: chaser, second: chaser, placement: 'far', samples: 16 }, 'bad_request'],
  [
    'pair lane out of range',
    'pchase.pair',
    { first: { ...chaser, lane: 32 }, second: chaser, placement: 'same-sm', samples: 16 },
    'bad_request',
  ],
  ['flushL2 not a boolean', 'pchase', { ...chase, flushL2: 'yes' }, 'bad_request'],
  ['carveoutPercent over 100', 'pchase', { ...chase, carveoutPercent: 101 }, 'bad_request'],
  ['negative carveoutPercent', 'pchase.batch', { ...chase, arrayBytesList: [4096], carveoutPercent: -1 }, 'bad_request'],
  ['batch flushL2 not a boolean', 'pchase.batch', { ...chase, arrayBytesList: [4096], flushL2: 1 }, 'bad_request'],
  ['fetch granularity not a power-of-two step', 'pchase', { ...chase, l2FetchGranularityBytes: 96 }, 'bad_request'],
  ['fetch granularity as a string', 'pchase.batch', { ...chase, arrayBytesList: [4096], l2FetchGranularityBytes: '64' }, 'bad_request'],
  [
    'fractional pair carveoutPercent',
    'pchase.pair',
    { first: chaser, second: chaser, placement: 'same-sm', samples: 16, carveoutPercent: 12.5 },
    'bad_request',
  ],
  ['self-test without a space', 'selftest.consumer', { ...chase, space: undefined }, 'bad_request'],
  ['self-test SM out of range', 'selftest.consumer', { ...chase, smId: H100.device.multiprocessorCount }, 'bad_request'],
  ['self-test carveoutPercent not an integer', 'selftest.consumer', { ...chase, carveoutPercent: '50' }, 'bad_request'],
  ['self-test beyond device memory', 'selftest.consumer', { ...chase, arrayBytes: H100.device.totalMemoryBytes + 4096 }, 'out_of_memory'],
  [
    'bandwidth with unknown mode',
    'bandwidth',
    { mode: 'copy', arrayBytes: 4096, blocks: 1, threadsPerBlock: 32, repetitions: 1 },
    'bad_request',
  ],
  [
    'bandwidth with too many threads',
    'bandwidth',
    { mode: 'read', arrayBytes: 4096, blocks: 1, threadsPerBlock: 2048, repetitions: 1 },
    'bad_request',
  ],
  ['calibrate with zero samples', 'calibrate', { samples: 0 }, 'bad_request'],
  ['unknown op', 'pchase.triple', {}, 'unknown_op'],
  ['an op name only the op table object knows', 'toString', {}, 'unknown_op'],
];

describe('simulated probe requests', () => {
  it('lists its op table in hello: every protocol op, each answered', async () => {
    const channel = await openH100();
    const { ops } = await channel.request('hello', {});
    expect([...ops].sort()).toEqual([...PROBE_OPS].sort());
    for (const op of ops) {
      const error = await channel.request(op as ProbeOp, {} as never).catch((caught: unknown) => caught);
      expect((error as ProbeError | undefined)?.code, op).not.toBe('unknown_op');
    }
  });

  it('names the field in launch-setting errors, worded like the other rules', async () => {
    const channel = await openH100();
    await expect(channel.request('pchase', { ...chase, flushL2: 'yes' } as never)).rejects.toThrow('flushL2 must be a boolean, got "yes"');
    await expect(channel.request('pchase', { ...chase, carveoutPercent: 101 } as never)).rejects.toThrow(
      'carveoutPercent must be an integer in [0, 100], got 101',
    );
    await expect(channel.request('pchase', { ...chase, l2FetchGranularityBytes: 96 } as never)).rejects.toThrow(
      'l2FetchGranularityBytes must be one of 32, 64, 128, got 96',
    );
  });

  it.each(refused)('refuses %s', async (_, op, args, code) => {
    const channel = await openH100();
    const error = await channel.request(op as ProbeOp, args as never).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProbeError);
    expect((error as ProbeError).code).toBe(code);
  });

  it('stops an overrunning request with a timeout error', async () => {
    const channel = await openH100();
    const started = performance.now();
    const request = channel.request('pchase', { ...chase, space: 'global.cg', arrayBytes: 2 * 1024 ** 3, strideBytes: 32 } as never, {
      timeoutMs: 50,
    });
    await expect(request).rejects.toMatchObject({ code: 'timeout' });
    expect(performance.now() - started).toBeLessThan(1000);
    // The channel still serves the next request.
    expect((await channel.request('hello', {})).devices).toHaveLength(1);
  });

  it('stops when the caller aborts, and refuses an already aborted signal', async () => {
    const channel = await openH100();
    const controller = new AbortController();
    const request = channel.request('pchase', { ...chase, space: 'global.cg', arrayBytes: 2 * 1024 ** 3 } as never, {
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 20);
    await expect(request).rejects.toMatchObject({ code: 'cancelled' });
    await expect(channel.request('hello', {}, { signal: controller.signal })).rejects.toMatchObject({ code: 'cancelled' });
  });

  it('keeps the event loop responsive during a long walk: other callbacks run between its slices', async () => {
    const channel = await openH100();
    // Counted, not timed (npm test passes on two busy cores): a walk of half a million loads spans several of the
    // simulator's 8 ms slices on any machine, and a slower machine only gives it more.
    let ticks = 0;
    let walking = true;
    const tick = (): void => {
      ticks += 1;
      if (walking) setImmediate(tick);
    };
    setImmediate(tick);
    try {
      await channel.request('pchase', { ...chase, space: 'global.cg', arrayBytes: 64 * 1024 ** 2, strideBytes: 128 } as never);
    } finally {
      walking = false;
    }
    expect(ticks).toBeGreaterThanOrEqual(2);
  });

  it('answers queued requests in order, one at a time', async () => {
    const channel = await openH100();
    const order: string[] = [];
    await Promise.all([
      channel.request('pchase', { ...chase, arrayBytes: 1024 * 1024 } as never).then(() => order.push('pchase')),
      channel.request('calibrate', {}).then(() => order.push('calibrate')),
    ]);
    expect(order).toEqual(['pchase', 'calibrate']);
  });

  it('refuses requests after close', async () => {
    const channel = await openH100();
    await channel.close();
    await expect(channel.request('hello', {})).rejects.toBeInstanceOf(ProbeError);
  });
});
