/** buildConstantL15 on synthetic constant sweeps (pure): the L1.5 bound, and the sweeps that cannot give one. */
import { describe, expect, it } from 'vitest';
import { buildConstantL15 } from '../../../server/discovery/strategies/constant.js';
import type { RawSeries } from '../../../server/model/document.js';

const L1 = 33;
const L15 = 100;
const BEHIND = 300;

/** One constant size sweep (a batch per size): up to 2 KiB in the constant L1, then the L1.5 up to `l15Bytes`, then what lies behind. */
function constantSweep(sizes: number[], l15Bytes: number): RawSeries[] {
  return sizes.map((arrayBytes) => ({
    name: 'constant.size.coarse',
    op: 'pchase.batch',
    args: { space: 'constant', arrayBytesList: [arrayBytes], strideBytes: 64, pattern: 'sequential', warmup: true, samples: 64 },
    result: {
      series: [{ arrayBytes, smId: 0, latenciesCycles: Array(64).fill(arrayBytes <= 2048 ? L1 : arrayBytes <= l15Bytes ? L15 : BEHIND) }],
    },
  }));
}

const coldWalk: RawSeries = {
  name: 'constant.fetch',
  op: 'pchase.batch',
  args: { space: 'constant', arrayBytesList: [65536], strideBytes: 1024, pattern: 'sequential', warmup: false, samples: 64 },
  result: { series: [{ arrayBytes: 65536, smId: 0, latenciesCycles: Array(64).fill(BEHIND) }] },
};

const SIZES = [512, 1024, 1536, 2048, 2112, 3072, 4096, 8192, 16384, 32768, 65536];

describe('buildConstantL15', () => {
  it('reports the whole bank as a lower bound when every size past the constant L1 still hits the L1.5', () => {
    const built = buildConstantL15([...constantSweep(SIZES, 1 << 20), coldWalk], null, 2112);
    expect(built.element?.size).toMatchObject({ value: 65536, bound: 'lower', source: 'microbenchmark' });
    expect(built.element?.latency?.p50).toBe(L15);
  });

  it('gives no size when loads reach the level behind it inside the bank, and nothing without a constant L1 step', () => {
    const built = buildConstantL15([...constantSweep(SIZES, 16384), coldWalk], null, 2112);
    expect(built.element?.size).toBeUndefined();
    expect(built.warnings).toContainEqual(expect.stringContaining('no size reported'));
    expect(buildConstantL15(constantSweep(SIZES, 1 << 20), null, undefined)).toEqual({ warnings: [] });
  });

  it('says when the sweep did not reach past the constant L1', () => {
    const built = buildConstantL15(constantSweep([512, 1024, 2048, 2112], 1 << 20), null, 2112);
    expect(built.warnings).toEqual([expect.stringContaining('did not reach past the constant L1')]);
  });
});
