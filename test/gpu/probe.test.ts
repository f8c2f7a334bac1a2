import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProbeChannel } from '../../server/gpu/backend.js';
import { NativeBackend } from '../../server/gpu/native.js';
import { MEMORY_SPACES, type DeviceProperties, type PchaseArgs } from '../../server/protocol/ops.js';
import { exchange, expectProbeError, median, PROBE_PATH, probeBuilt } from '../integration/probe/raw-probe.js';

const hasGpu = existsSync('/dev/nvidia0') || spawnSync('nvidia-smi', ['-L']).status === 0;

const chase = (over: Partial<PchaseArgs>): PchaseArgs => ({
  space: 'global.ca',
  arrayBytes: 16384,
  strideBytes: 128,
  pattern: 'sequential',
  warmup: true,
  samples: 256,
  ...over,
});

describe.skipIf(!hasGpu)(
  hasGpu ? 'topod-probe on a real GPU' : 'topod-probe on a real GPU (skipped: no /dev/nvidia0 and no nvidia-smi on this machine)',
  () => {
    const backend = new NativeBackend({ requestTimeoutMs: 120_000 });
    let channel: ProbeChannel;
    let device: DeviceProperties;

    beforeAll(async () => {
      if (!probeBuilt) throw new Error(`a GPU is present but ${PROBE_PATH} is not built: run npm run build:probe`);
      const gpus = await backend.listDevices();
      expect(gpus.length).toBeGreaterThan(0);
      channel = await backend.open(gpus[0]!);
      device = (await channel.request('hello', {})).devices[0]!;
    });
    afterAll(() => backend.close());

    it('hello reports the pinned device with its properties', () => {
      expect(device.uuid).toMatch(/^GPU-[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$/);
      expect(device.multiprocessorCount).toBeGreaterThan(0);
      expect(device.l2CacheSizeBytes).toBeGreaterThan(0);
    });

    it('calibrate measures a clock near the reported one', async () => {
      const cal = await channel.request('calibrate', {});
      expect(cal.clockReadOverheadCycles).toBeGreaterThan(0);
      if (device.clockRateKHz) expect(cal.smClockHz / (device.clockRateKHz * 1000)).toBeLessThan(1.1);
      expect(cal.smClockHz).toBeGreaterThan(1e8);
    });

    it('chases every memory space', async () => {
      for (const space of MEMORY_SPACES) {
        const r = await channel.request('pchase', chase({ space, arrayBytes: 8192, strideBytes: 64 }));
        expect(r.latenciesCycles, space).toHaveLength(256);
        expect(Math.min(...r.latenciesCycles), space).toBeGreaterThan(0);
      }
    });

    it('L1-resident < L2-resident < device-memory latency', async () => {
      const l1 = await channel.request('pchase', chase({}));
      const l2 = await channel.request('pchase', chase({ space: 'global.cg', arrayBytes: 4 << 20, pattern: 'random' }));
      const dram = await channel.request(
        'pchase',
        chase({ space: 'global.cg', arrayBytes: 1 << 30, strideBytes: 4096, pattern: 'random', warmup: false, samples: 1024 }),
      );
      expect(median(l1.latenciesCycles)).toBeLessThan(median(l2.latenciesCycles));
      expect(median(l2.latenciesCycles)).toBeLessThan(median(dram.latenciesCycles));
    });

    it('places a chase on the requested SM', async () => {
      const smId = device.multiprocessorCount - 1;
      expect((await channel.request('pchase', chase({ smId, samples: 16 }))).smId).toBe(smId);
    });

    it('batches one chaser per SM', async () => {
      const sizes = [8192, 16384, 32768, 65536];
      const r = await channel.request('pchase.batch', {
        space: 'global.ca',
        arrayBytesList: sizes,
        strideBytes: 128,
        pattern: 'sequential',
        warmup: true,
        samples: 64,
      });
      expect(r.series.map((s) => s.arrayBytes)).toEqual(sizes);
      expect(new Set(r.series.map((s) => s.smId)).size).toBe(sizes.length);
    });

    it('pairs: same SM shares an L1; an L2-sized second array evicts the first across SMs', async () => {
      const small = { space: 'global.ca' as const, arrayBytes: 16384, strideBytes: 128 };
      const same = await channel.request('pchase.pair', { first: small, second: small, placement: 'same-sm', samples: 64 });
      expect(same.firstSmId).toBe(same.secondSmId);
      const l2 = device.l2CacheSizeBytes;
      const big = await channel.request('pchase.pair', {
        first: { space: 'global.cg', arrayBytes: l2 / 4, strideBytes: 128, pattern: 'random' },
        second: { space: 'global.cg', arrayBytes: l2 * 2, strideBytes: 128, pattern: 'random' },
        placement: 'different-sm',
        samples: 256,
      });
      expect(big.firstSmId).not.toBe(big.secondSmId);
      expect(median(big.firstLatenciesCycles)).toBeGreaterThan(median(same.firstLatenciesCycles));
    });

    it('device-memory read bandwidth is 50-100% of the peak the memory clock and bus width give', async () => {
      const peak =
        device.memoryClockRateKHz && device.memoryBusWidthBits
          ? 2 * device.memoryClockRateKHz * 1e3 * (device.memoryBusWidthBits / 8)
          : 3.35e12;
      const r = await channel.request('bandwidth', {
        mode: 'read',
        arrayBytes: 1 << 30,
        blocks: device.multiprocessorCount * 8,
        threadsPerBlock: 1024,
        repetitions: 10,
      });
      const bytesPerS = r.bytesPerRepetition / median(r.secondsPerRepetition);
      expect(bytesPerS / peak).toBeGreaterThan(0.5);
      expect(bytesPerS / peak).toBeLessThan(1);
    });

    it('answers bad requests with errors and keeps serving', async () => {
      await expectProbeError(channel.request('pchase', chase({ arrayBytes: -4096 })), 'bad_request');
      await expectProbeError(channel.request('pchase', chase({ arrayBytes: device.totalMemoryBytes * 2 })), 'out_of_memory');
      await expectProbeError(channel.request('pchase', chase({ space: 'l7' as never })), 'bad_request');
      await expectProbeError(channel.request('pchase', chase({ strideBytes: 6 })), 'bad_request');
      await expectProbeError(
        channel.request('bandwidth', { mode: 'read', arrayBytes: 1 << 20, blocks: 0, threadsPerBlock: 256, repetitions: 1 }),
        'bad_request',
      );
      expect((await channel.request('pchase', chase({ samples: 8 }))).latenciesCycles).toHaveLength(8);
    });

    it('answers malformed JSON with id null and serves the next line', async () => {
      const { responses, exitCode } = await exchange([
        '{"id":1,"op":"pchase","args":',
        JSON.stringify({ id: 2, op: 'pchase', args: chase({ samples: 4 }) }),
      ]);
      expect(exitCode).toBe(0);
      expect(responses[0]).toMatchObject({ id: null, ok: false, error: { code: 'bad_request' } });
      expect(responses[1]).toMatchObject({ id: 2, ok: true });
    });
  },
);
