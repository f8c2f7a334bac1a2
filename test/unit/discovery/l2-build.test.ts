/**
 * buildL2 on synthetic series (pure): the branches a real sweep rarely takes —
 * an L2 that is not segmented, a measurement larger than the API says, no
 * change point, a sweep too short for device memory, series recorded before
 * the cold device-memory walk existed, and cold walks that give no
 * granularity.
 */
import { describe, expect, it } from 'vitest';
import { buildL2 } from '../../../server/discovery/strategies/l2.js';
import type { DeviceProperties } from '../../../server/protocol/ops.js';
import type { RawSeries } from '../../../server/model/document.js';

const MIB = 1024 * 1024;
const HIT = 290;
const MISS = 700;
const device = { l2CacheSizeBytes: 4 * MIB, totalMemoryBytes: 80 * 1024 * MIB, maxL2FetchGranularityBytes: 64 } as DeviceProperties;

/** A coarse L2 sweep whose arrays up to `capacityBytes` hit and larger ones miss. */
function sweep(sizes: number[], capacityBytes: number): RawSeries[] {
  return sizes.map((arrayBytes) => ({
    name: 'l2.size.coarse',
    op: 'pchase',
    args: { space: 'global.cg', arrayBytes, strideBytes: 128, pattern: 'sequential', warmup: true, samples: 64, smId: 0 },
    result: { smId: 0, latenciesCycles: Array.from({ length: 64 }, (_, i) => (arrayBytes <= capacityBytes ? HIT : MISS) + (i % 3)) },
  }));
}

const octaves = (from: number, to: number) => {
  const sizes: number[] = [];
  for (let size = from; size <= to; size = Math.round((size * 1.19) / 128) * 128) sizes.push(size);
  return sizes;
};

function cold(name: string, strideBytes: number, samples: number[]): RawSeries {
  return {
    name,
    op: 'pchase',
    args: {
      space: 'global.cg',
      arrayBytes: strideBytes * samples.length,
      strideBytes,
      pattern: 'sequential',
      warmup: false,
      samples: samples.length,
      smId: 0,
      flushL2: true,
    },
    result: { smId: 0, latenciesCycles: samples },
  };
}

describe('buildL2', () => {
  it('reports an unsegmented L2 as its measured size, and device memory from the largest array when no cold walk was recorded', () => {
    const built = buildL2(sweep(octaves(MIB / 2, 16 * MIB), 4 * MIB), device, null);
    expect(built.l2?.size).toMatchObject({ source: 'microbenchmark' });
    expect(built.l2?.segmentSize).toBeUndefined();
    expect(built.deviceMemory?.latency?.p50).toBeGreaterThanOrEqual(MISS);
    expect(built.warnings).toEqual([]);
  });

  it('warns when it measures more than the API reports, and when the sweep stops short of device memory', () => {
    const small = { ...device, l2CacheSizeBytes: 2 * MIB } as DeviceProperties;
    const built = buildL2(sweep(octaves(MIB / 2, 5 * MIB), 4 * MIB), small, null);
    expect(built.warnings).toContainEqual(expect.stringContaining('more than the'));
    expect(built.warnings).toContainEqual(expect.stringContaining('did not reach far enough'));
    expect(built.deviceMemory?.latency).toBeUndefined();
  });

  it('says when no change point was found', () => {
    const built = buildL2(sweep(octaves(MIB / 2, 16 * MIB), 64 * MIB), device, null);
    expect(built.l2).toBeUndefined();
    expect(built.warnings).toEqual([expect.stringContaining('no size change point')]);
  });

  it('reads the sector and fill granularity from cold walks, and warns when the walks show none', () => {
    const base = [...sweep(octaves(MIB / 2, 16 * MIB), 2 * MIB), cold('l2.dram', 2176, Array(64).fill(MISS))];
    const walk = (name: string, granularity: number) =>
      [4, 8, 16, 32, 64, 128, 256].map((stride) =>
        cold(
          name,
          stride,
          Array.from({ length: 64 }, (_, i) =>
            Math.floor((i * stride) / granularity) !== Math.floor(((i - 1) * stride) / granularity) || i === 0 ? MISS : HIT,
          ),
        ),
      );
    const built = buildL2([...base, ...walk('l2.fetch', 32), ...walk('l2.fill', 64)], device, null);
    expect(built.l2?.fetchGranularity?.value).toBe(32);
    expect(built.l2?.fillGranularity).toMatchObject({ value: 64, note: expect.stringContaining('64 B') });
    const allMiss = [4, 8, 16, 32].map((stride) => cold('l2.fill', stride, Array(64).fill(MISS)));
    expect(
      buildL2([...base, ...allMiss], { ...device, maxL2FetchGranularityBytes: null } as DeviceProperties, null).warnings,
    ).toContainEqual(expect.stringContaining('no fill granularity'));
  });
});
