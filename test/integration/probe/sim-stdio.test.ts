import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProbeError } from '../../../server/protocol/probe-error.js';
import { JsonLinesChannel } from '../../../server/gpu/native.js';
import { REPO_ROOT } from './raw-probe.js';

// The native client against the simulated GPU's stdio server: the same
// transport discovery uses with the real probe, end to end, without a GPU.
const TSX = path.join(REPO_ROOT, 'node_modules/.bin/tsx');
const SIM = path.join(REPO_ROOT, 'server/gpu/sim/stdio.ts');
const ready = existsSync(TSX) && existsSync(SIM);

describe.skipIf(!ready)('JsonLinesChannel over server/gpu/sim/stdio.ts (skipped when tsx or the sim server is missing)', () => {
  const channel = new JsonLinesChannel({
    command: TSX,
    args: [SIM, '--model', 'h100-sxm5-80gb', '--seed', '7'],
    requestTimeoutMs: 60_000,
    label: 'sim stdio',
  });
  afterAll(() => channel.close());

  it('runs every op', async () => {
    const hello = await channel.request('hello', {});
    expect(hello.devices).toHaveLength(1);
    expect(hello.devices[0]).toMatchObject({ reservedSharedMemPerBlockBytes: 1024, maxL2FetchGranularityBytes: 64 });
    const chase = await channel.request('pchase', {
      space: 'global.ca',
      arrayBytes: 16384,
      strideBytes: 128,
      pattern: 'sequential',
      warmup: true,
      samples: 32,
    });
    expect(chase.latenciesCycles).toHaveLength(32);
    expect(chase.launch).toEqual({ carveoutPercent: 0, sharedBytesPerBlock: 32 * 4 + 4 + 16, flushedL2: false });
    const flushed = await channel.request('pchase', {
      space: 'global.cg',
      arrayBytes: 16384,
      strideBytes: 32,
      pattern: 'sequential',
      warmup: false,
      samples: 32,
      flushL2: true,
      carveoutPercent: 100,
      l2FetchGranularityBytes: 128,
    });
    expect(flushed.launch).toEqual({
      carveoutPercent: 100,
      sharedBytesPerBlock: 32 * 4 + 4 + 16,
      flushedL2: true,
      l2FetchGranularityBytes: 128,
    });
    const selfTest = await channel.request('selftest.consumer', {
      space: 'global.cg',
      arrayBytes: 16384,
      strideBytes: 128,
      pattern: 'sequential',
      warmup: true,
      samples: 16,
    });
    expect(selfTest.consumedLatenciesCycles).toHaveLength(16);
    expect(selfTest.unconsumedLatenciesCycles).toHaveLength(16);
    const batch = await channel.request('pchase.batch', {
      space: 'global.ca',
      arrayBytesList: [8192, 16384],
      strideBytes: 128,
      pattern: 'sequential',
      warmup: true,
      samples: 16,
    });
    expect(batch.series).toHaveLength(2);
    const small = { space: 'global.ca' as const, arrayBytes: 8192, strideBytes: 128 };
    const pair = await channel.request('pchase.pair', { first: small, second: small, placement: 'same-sm', samples: 16 });
    expect(pair.firstLatenciesCycles).toHaveLength(16);
    expect(pair.launch?.sharedBytesPerBlock).toBe(2 * (16 * 4 + 4) + 16);
    const bw = await channel.request('bandwidth', { mode: 'read', arrayBytes: 1 << 24, blocks: 132, threadsPerBlock: 256, repetitions: 3 });
    expect(bw.secondsPerRepetition).toHaveLength(3);
    const cal = await channel.request('calibrate', {});
    expect(cal.smClockHz).toBeGreaterThan(0);
  });

  it('turns the simulator’s validation errors into ProbeError and keeps the process', async () => {
    const error = await channel
      .request('pchase', { space: 'global.ca', arrayBytes: -1, strideBytes: 128, pattern: 'sequential', warmup: true, samples: 4 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProbeError);
    expect((error as ProbeError).code).toBe('bad_request');
    expect((await channel.request('hello', {})).devices).toHaveLength(1);
    expect(channel.startCount).toBe(1);
  });
});
