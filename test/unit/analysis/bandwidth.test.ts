import { describe, expect, it } from 'vitest';
import {
  bestBandwidthPoint,
  bytesPerSecond,
  describeGeometry,
  repetitionConfidence,
  searchBandwidth,
  type BandwidthGeometry,
  type BandwidthSearchPlan,
} from '../../../server/analysis/index.js';
import { gained, passesAxis, passesLimit, smsAxis, startGeometry, threadsAxis } from '../../../server/analysis/bandwidth.js';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** A made-up 100-SM GPU streaming a 20 MiB array: the numbers only need to be self-consistent. */
const PLAN: BandwidthSearchPlan = {
  multiprocessorCount: 100,
  maxThreadsPerBlock: 1024,
  maxThreadsPerMultiprocessor: 2048,
  warpSize: 32,
  arrayBytes: 20 * MIB,
  maxBytesPerLaunch: 4 * GIB,
  maxPasses: 4096,
  minGain: 0.02,
  maxRounds: 2,
};

/**
 * A synthetic level: `peak` bytes/s once enough SMs and threads stream, each
 * SM at most `perSm`, each thread `perThread`, and a fixed `overheadS` per
 * launch. Rate = bytes / (overhead + bytes / throughput).
 */
function level(peak: number, perSm: number, perThread: number, overheadS: number, plan = PLAN) {
  const measured: BandwidthGeometry[] = [];
  const measure = async (g: BandwidthGeometry) => {
    measured.push(g);
    const sms = Math.min(g.blocks, plan.multiprocessorCount);
    const threadsPerSm = Math.ceil(g.blocks / plan.multiprocessorCount) * g.threadsPerBlock;
    const throughput = Math.min(peak, sms * Math.min(perSm, threadsPerSm * perThread));
    const bytes = plan.arrayBytes * g.passes;
    return bytes / (overheadS + bytes / throughput);
  };
  return { measure, measured };
}

describe('bytesPerSecond and repetitionConfidence', () => {
  it('divides the bytes by the median launch time, so one slow launch does not move the rate', () => {
    expect(bytesPerSecond(1e9, [0.001, 0.001, 0.5])).toBeCloseTo(1e12, 0);
    expect(bytesPerSecond(1e9, [0.001, 0.003])).toBeCloseTo(5e11, 0);
  });

  it('refuses a series without positive times', () => {
    expect(() => bytesPerSecond(1e9, [0, 0, 0])).toThrow(RangeError);
    expect(() => bytesPerSecond(1e9, [])).toThrow();
  });

  it('is 1 for equal launch times and falls with their spread, never below 0', () => {
    expect(repetitionConfidence([2, 2, 2])).toBe(1);
    expect(repetitionConfidence([1.9, 2, 2.1])).toBeCloseTo(0.9, 10);
    expect(repetitionConfidence([1, 2, 9])).toBe(0);
  });
});

describe('bestBandwidthPoint and describeGeometry', () => {
  it('picks the fastest point, the first of equals, and null for none', () => {
    const points = [
      { blocks: 1, threadsPerBlock: 32, passes: 1, bytesPerSecond: 5 },
      { blocks: 2, threadsPerBlock: 32, passes: 1, bytesPerSecond: 9 },
      { blocks: 3, threadsPerBlock: 32, passes: 1, bytesPerSecond: 9 },
    ];
    expect(bestBandwidthPoint(points)?.blocks).toBe(2);
    expect(bestBandwidthPoint([])).toBeNull();
  });

  it('names SMs, blocks per SM, threads and passes, blocks dealt one per SM first', () => {
    expect(describeGeometry({ blocks: 200, threadsPerBlock: 1024, passes: 64 }, 100)).toBe(
      '100 SMs × 2 blocks × 1024 threads, 64 passes per launch',
    );
    expect(describeGeometry({ blocks: 25, threadsPerBlock: 256, passes: 1 }, 100)).toBe(
      '25 SMs × 1 block × 256 threads, 1 pass per launch',
    );
  });
});

describe('the search axes', () => {
  it('starts with every SM full and one pass', () => {
    expect(startGeometry(PLAN)).toEqual({ blocks: 200, threadsPerBlock: 1024, passes: 1 });
  });

  it('doubles passes up to the bytes one launch may stream', () => {
    expect(passesLimit(PLAN)).toBe(204);
    expect(passesAxis(PLAN, startGeometry(PLAN)).map((g) => g.passes)).toEqual([1, 2, 4, 8, 16, 32, 64, 128]);
    expect(passesLimit({ ...PLAN, arrayBytes: 8 * GIB })).toBe(1);
    expect(passesLimit({ ...PLAN, maxPasses: 8 })).toBe(8);
  });

  it('doubles threads per SM from four warps to a full SM, in blocks of at most maxThreadsPerBlock, keeping the passes', () => {
    const axis = threadsAxis(PLAN, { blocks: 200, threadsPerBlock: 1024, passes: 16 });
    expect(axis).toEqual([
      { blocks: 100, threadsPerBlock: 128, passes: 16 },
      { blocks: 100, threadsPerBlock: 256, passes: 16 },
      { blocks: 100, threadsPerBlock: 512, passes: 16 },
      { blocks: 100, threadsPerBlock: 1024, passes: 16 },
      { blocks: 200, threadsPerBlock: 1024, passes: 16 },
    ]);
  });

  it('uses an eighth, a quarter and half of the SMs, one block each, without repeats on a small GPU', () => {
    expect(smsAxis(PLAN, { blocks: 200, threadsPerBlock: 512, passes: 4 }).map((g) => [g.blocks, g.threadsPerBlock, g.passes])).toEqual([
      [13, 512, 4],
      [25, 512, 4],
      [50, 512, 4],
    ]);
    expect(smsAxis({ ...PLAN, multiprocessorCount: 2 }, startGeometry(PLAN)).map((g) => g.blocks)).toEqual([1]);
  });

  it('calls a step a gain from minGain on', () => {
    expect(gained(100, 102, 0.02)).toBe(true);
    expect(gained(100, 101.9, 0.02)).toBe(false);
  });
});

describe('searchBandwidth', () => {
  it('climbs passes past the launch overhead and recovers the level’s peak within the 2 % stop rule', async () => {
    const peak = 5e12;
    const { measure } = level(peak, 100e9, 1e9, 8e-6);
    const { best, curve } = await searchBandwidth(PLAN, measure);
    // The best step stops gaining 2 %: it lies within twice that of the peak.
    expect(best.bytesPerSecond).toBeGreaterThan(peak * 0.96);
    expect(best.bytesPerSecond).toBeLessThanOrEqual(peak);
    expect(best.passes).toBeGreaterThan(1);
    // One pass is launch-bound: far below the peak, and kept in the curve.
    expect(curve[0]).toMatchObject({ passes: 1 });
    expect(curve[0]!.bytesPerSecond).toBeLessThan(peak * 0.5);
  });

  it('finds the threads an SM needs when too few leave the level idle, and keeps the saturation curve', async () => {
    // Each SM needs 512 threads to reach its 50 GB/s; 100 SMs reach the 5 TB/s peak together.
    const { measure } = level(5e12, 50e9, 50e9 / 512, 1e-6);
    const { best, curve } = await searchBandwidth(PLAN, measure);
    expect(best.bytesPerSecond).toBeGreaterThan(5e12 * 0.96);
    const perSm = curve.filter((p) => p.blocks === 100 && p.passes === best.passes).sort((a, b) => a.threadsPerBlock - b.threadsPerBlock);
    expect(perSm.map((p) => p.threadsPerBlock)).toEqual([128, 256, 512, 1024]);
    expect(perSm[0]!.bytesPerSecond).toBeLessThan(perSm[2]!.bytesPerSecond * 0.3);
    // Fewer SMs: the curve of how many the level takes.
    const fewer = curve.filter((p) => p.blocks < PLAN.multiprocessorCount);
    expect(fewer.map((p) => p.blocks).sort((a, b) => a - b)).toEqual([13, 25, 50]);
    expect(fewer.every((p) => p.bytesPerSecond < best.bytesPerSecond)).toBe(true);
  });

  it('measures each geometry once and stops a second round that gains nothing', async () => {
    const { measure, measured } = level(3e12, 100e9, 1e9, 2e-6);
    const { curve } = await searchBandwidth(PLAN, measure);
    const keys = measured.map((g) => `${g.blocks}/${g.threadsPerBlock}/${g.passes}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(curve).toHaveLength(measured.length);
    // Passes axis, threads axis, a second round's few passes up, three SM counts: a few dozen launches at most.
    expect(measured.length).toBeLessThan(25);
  });

  it('does not end the passes axis on one step that noise pulled down while the overhead still costs more than the stop rule', async () => {
    const peak = 5e12;
    const { measure } = level(peak, 100e9, 1e9, 8e-6);
    // The step to 16 passes reads 10 % slow, gaining nothing over 8, which are still ~20 % under the peak.
    const noisy = async (g: BandwidthGeometry) => (await measure(g)) * (g.passes === 16 && g.blocks === 200 ? 0.9 : 1);
    const { best, curve } = await searchBandwidth(PLAN, noisy);
    expect(curve.some((p) => p.passes === 32 && p.blocks === 200)).toBe(true);
    expect(best.bytesPerSecond).toBeGreaterThan(peak * 0.96);
  });

  it('does not pass one launch’s byte limit on a large array', async () => {
    const plan = { ...PLAN, arrayBytes: 1 * GIB };
    const { measure, measured } = level(3e12, 100e9, 1e9, 8e-6, plan);
    const { best } = await searchBandwidth(plan, measure);
    expect(Math.max(...measured.map((g) => g.passes))).toBeLessThanOrEqual(4);
    expect(best.bytesPerSecond).toBeGreaterThan(3e12 * 0.97);
  });
});
