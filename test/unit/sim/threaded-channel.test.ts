/**
 * A simulated GPU on a thread of its own answers as the one on the caller's
 * thread does: same seed, same answers and totals; errors, timeouts and
 * cancellation keep their codes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ProbeChannel } from '../../../server/gpu/backend.js';
import { GPU_MODELS, SimulatedBackend, ThreadedSimulatedChannel } from '../../../server/gpu/sim/index.js';
import { ProbeError } from '../../../server/protocol/probe-error.js';

const H100 = GPU_MODELS['h100-sxm5-80gb']!;
const chase = { space: 'global.ca', arrayBytes: 64 * 1024, strideBytes: 32, pattern: 'sequential', warmup: true, samples: 64 } as const;
/** Long enough that a cancel or a 1 ms timeout lands while it runs (tens of millions of simulated loads). */
const longChase = { ...chase, arrayBytes: 512 * 1024 * 1024, strideBytes: 32, samples: 8192 } as const;

const opened: ProbeChannel[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((channel) => channel.close()));
});

async function open(thread: boolean, seed = 7) {
  const backend = new SimulatedBackend({ models: [H100.id], seed, thread });
  const [gpu] = await backend.listDevices();
  const channel = await backend.open(gpu!);
  opened.push(channel);
  return { backend, channel: channel as ProbeChannel & { simulatedDeviceSeconds(): number; loadCount(): number } };
}

async function rejection(promise: Promise<unknown>): Promise<ProbeError> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ProbeError);
  return error as ProbeError;
}

describe('a simulated GPU on its own thread', () => {
  it('is a ThreadedSimulatedChannel, and answers as the same seed does on the calling thread, totals included', async () => {
    const inThread = await open(false);
    const threaded = await open(true);
    expect(threaded.channel).toBeInstanceOf(ThreadedSimulatedChannel);
    for (const { channel } of [inThread, threaded]) await channel.request('hello', {});
    const [a, b] = await Promise.all([inThread.channel.request('pchase', chase), threaded.channel.request('pchase', chase)]);
    expect(b).toEqual(a);
    expect(threaded.channel.simulatedDeviceSeconds()).toBe(inThread.channel.simulatedDeviceSeconds());
    expect(threaded.channel.loadCount()).toBe(inThread.channel.loadCount());
    expect(threaded.channel.loadCount()).toBeGreaterThan(0);
    expect(threaded.backend.loadCount()).toBe(threaded.channel.loadCount());
  });

  it("keeps the probe's error codes", async () => {
    const { channel } = await open(true);
    const error = await rejection(channel.request('pchase', { ...chase, strideBytes: 30 }));
    expect(error.code).toBe('bad_request');
    expect((await rejection(channel.request('no.such.op' as 'hello', {}))).code).toBe('unknown_op');
    // The channel still answers after an error.
    await expect(channel.request('hello', {})).resolves.toMatchObject({ devices: [expect.objectContaining({ name: H100.name })] });
  });

  it('stops a request at its timeout and on an abort, and answers the next one', async () => {
    const { channel } = await open(true);
    expect((await rejection(channel.request('pchase', longChase, { timeoutMs: 1 }))).code).toBe('timeout');
    const controller = new AbortController();
    const running = channel.request('pchase', longChase, { signal: controller.signal });
    setTimeout(() => controller.abort(new ProbeError('cancelled', 'the job was cancelled')), 5);
    expect((await rejection(running)).code).toBe('cancelled');
    await expect(channel.request('pchase', chase)).resolves.toBeDefined();
  });

  it('refuses requests once closed, and moves its totals to the backend', async () => {
    const { backend, channel } = await open(true);
    await channel.request('pchase', chase);
    const loads = channel.loadCount();
    await channel.close();
    expect(backend.openChannelCount).toBe(0);
    expect(backend.loadCount()).toBe(loads);
    expect((await rejection(channel.request('hello', {}))).code).toBe('closed');
  });
});
