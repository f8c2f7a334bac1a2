import { describe, expect, it } from 'vitest';
import { analyseFarnear, analysePersist, analyseSharedCapacity, hitShare, latencyClasses } from '../../../server/analysis/l2-farnear.js';

/** A deterministic series: chunk c gets `a` when its bit pattern says so, else `b`, with a few cycles of spread. */
function series(smId: number, n: number, a: number, b: number, shareA = 0.5): { smId: number; latenciesCycles: number[] } {
  return {
    smId,
    latenciesCycles: Array.from({ length: n }, (_, c) => (((c * 2654435761) >>> 0) / 2 ** 32 < shareA ? a : b) + (c % 5) - 2),
  };
}

describe('l2.farnear analysis', () => {
  it('splits far-partition hits past capacity from near device memory, and near from far device memory past the L2', () => {
    const beyond = [series(0, 512, 485, 593), series(6, 512, 485, 593)];
    const dram = [series(0, 512, 593, 757), series(6, 512, 593, 757)];
    const a = analyseFarnear(beyond, dram);
    expect(a.warnings).toEqual([]);
    expect(Math.round(a.farBeyondSamples!.reduce((x, y) => x + y) / a.farBeyondSamples!.length)).toBe(485);
    expect(a.deviceMemoryNearSamples!.every((x) => Math.abs(x - 593) <= 2)).toBe(true);
    expect(a.deviceMemoryFarSamples!.every((x) => Math.abs(x - 757) <= 2)).toBe(true);
    expect(a.confidence).toBeGreaterThan(0.9);
  });

  it('takes one device-memory class as both near and far, and warns when near memory disagrees', () => {
    const one = analyseFarnear([], [series(0, 512, 590, 590)]);
    expect(one.deviceMemoryNearSamples).toEqual(one.deviceMemoryFarSamples);
    expect(one.warnings).toEqual([]);
    const disagree = analyseFarnear([series(0, 512, 485, 700)], [series(0, 512, 560, 800)]);
    expect(disagree.warnings.join()).toMatch(/disagree/);
    expect(disagree.confidence).toBeLessThan(0.5);
  });

  it('finds no classes in one latency, or in too few chunks', () => {
    expect(latencyClasses([series(0, 512, 480, 480)])).toBeNull();
    expect(latencyClasses([series(0, 8, 480, 600)])).toBeNull();
    expect(analyseFarnear([], []).farBeyondSamples).toBeNull();
  });

  it('brackets the shared-data capacity between the largest surviving and the smallest lost size', () => {
    const threshold = 400;
    const kept = series(0, 256, 300, 330);
    const lost = series(0, 256, 485, 593);
    const c = analyseSharedCapacity(
      [
        { arrayBytes: 30 << 20, first: lost },
        { arrayBytes: 18 << 20, first: kept },
      ],
      threshold,
    );
    expect(c.points.map((p) => p.arrayBytes)).toEqual([18 << 20, 30 << 20]);
    expect(c.survivedBelowBytes).toBe(18 << 20);
    expect(c.lostFromBytes).toBe(30 << 20);
    expect(c.capacityBytes).toBe(24 << 20);
    expect(analyseSharedCapacity([{ arrayBytes: 18 << 20, first: kept }], threshold).capacityBytes).toBeNull();
    expect(analyseSharedCapacity([{ arrayBytes: 18 << 20, first: lost }], threshold).capacityBytes).toBeNull();
  });

  it('counts persisting-window hits without and with the window', () => {
    expect(analysePersist({ withoutCycles: [600, 610, 750, 300], withCycles: [300, 310, 320, 760] }, 450)).toEqual({
      hitRateWithout: 0.25,
      hitRateWith: 0.75,
    });
    expect(hitShare([], 100)).toBe(0);
  });
});
