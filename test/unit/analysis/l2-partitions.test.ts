import { describe, expect, it } from 'vitest';
import { analyseL2Partitions, joinRuns, splitHits, type PartitionSeries } from '../../../server/analysis/l2-partitions.js';

/** A deterministic PRNG (mulberry32) and a Gaussian from it. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const gaussian = () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  return { next, gaussian };
}

interface Synthetic {
  sms: number;
  chunks: number;
  near: number;
  far: number;
  stdev: number;
  /** Share of loads disturbed (a device-memory-like latency), and of chunks whose class is flipped for one SM. */
  outliers?: number;
  flips?: number;
  groupOf: (sm: number) => number;
  seed: number;
}

/** One launch: chunk c is homed in partition home[c]; SM s finds it near when its group is that partition. */
function launch(o: Synthetic): PartitionSeries[] {
  const r = rng(o.seed);
  const home = Array.from({ length: o.chunks }, () => (r.next() < 0.5 ? 0 : 1));
  return Array.from({ length: o.sms }, (_, smId) => ({
    smId,
    latenciesCycles: home.map((h) => {
      let near = h === o.groupOf(smId);
      if (r.next() < (o.flips ?? 0)) near = !near;
      const base = near ? o.near : o.far;
      if (r.next() < (o.outliers ?? 0)) return Math.round(base * 2.3 + 100 * r.next());
      return Math.round(base + o.stdev * r.gaussian());
    }),
  }));
}

/** SMs in TPC pairs dealt to the two partitions by a fixed irregular pattern (not halves). */
const interleaved = (sm: number) => [0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0][Math.floor(sm / 2) % 11]!;
const groupsOf = (sms: number, groupOf: (sm: number) => number) =>
  [0, 1].map((g) => Array.from({ length: sms }, (_, sm) => sm).filter((sm) => groupOf(sm) === g)).sort((a, b) => a[0]! - b[0]!);

describe('splitHits', () => {
  it('puts the threshold between two clean classes and finds the valley empty', () => {
    const values = [...Array(100).fill(280), ...Array(60).fill(312), 900];
    const split = splitHits(values)!;
    expect(split.threshold).toBeGreaterThan(280);
    expect(split.threshold).toBeLessThan(312);
    expect(split.nearMedian).toBe(280);
    expect(split.farMedian).toBe(312);
    expect(split.dip).toBe(0);
    expect(split.nearShare).toBeCloseTo(100 / 160, 6);
  });

  it('finds no valley in one Gaussian class', () => {
    const r = rng(5);
    const split = splitHits(Array.from({ length: 4000 }, () => 300 + 6 * r.gaussian()))!;
    expect(split.dip).toBeGreaterThan(1);
  });

  it('needs enough timed chunks', () => {
    expect(splitHits([280, 312, 280])).toBeNull();
    expect(splitHits([])).toBeNull();
  });
});

describe('joinRuns', () => {
  it('joins each SM’s runs one after another, NaN where a run lacks the SM, first block per SM', () => {
    const joined = joinRuns([
      [
        { smId: 1, latenciesCycles: [1, 2] },
        { smId: 0, latenciesCycles: [3, 4] },
        { smId: 0, latenciesCycles: [9, 9] },
      ],
      [{ smId: 0, latenciesCycles: [5, 6, 7] }],
    ]);
    expect(joined.map((s) => s.smId)).toEqual([0, 1]);
    expect(joined[0]!.latenciesCycles).toEqual([3, 4, 5, 6, 7]);
    expect(joined[1]!.latenciesCycles).toEqual([1, 2, Number.NaN, Number.NaN, Number.NaN]);
  });
});

describe('analyseL2Partitions', () => {
  const base: Synthetic = { sms: 132, chunks: 2048, near: 280, far: 312, stdev: 3, groupOf: interleaved, seed: 11 };

  it('recovers two interleaved groups and both latencies from a clear split', () => {
    const a = analyseL2Partitions([launch(base)]);
    expect(a.found).toBe(true);
    if (!a.found) return;
    expect(a.count).toBe(2);
    expect(a.smGroups).toEqual(groupsOf(132, interleaved));
    expect(a.nearP50).toBe(280);
    expect(a.farP50).toBe(312);
    expect(a.unsplitSmIds).toEqual([]);
    expect(a.confidence).toBeGreaterThan(0.9);
  });

  it('still recovers the groups from noisy classes that overlap, with outliers and flipped chunks, joining runs', () => {
    const noisy: Synthetic = { ...base, stdev: 12, outliers: 0.02, flips: 0.1, seed: 12 };
    const a = analyseL2Partitions([launch(noisy), launch({ ...noisy, seed: 13 })]);
    expect(a.found && a.count).toBe(2);
    if (!a.found) return;
    expect(a.smGroups).toEqual(groupsOf(132, interleaved));
    expect(Math.abs(a.nearP50 - 280)).toBeLessThanOrEqual(4);
    expect(Math.abs(a.farP50! - 312)).toBeLessThanOrEqual(4);
    // Lower than the clean split's, not zero.
    const clean = analyseL2Partitions([launch(base)]);
    expect(a.confidence).toBeGreaterThan(0.2);
    expect(a.confidence).toBeLessThan(clean.found ? clean.confidence : 1);
  });

  it('answers one partition when every SM’s hits are one class', () => {
    const a = analyseL2Partitions([launch({ ...base, far: 280, stdev: 5, seed: 14 })]);
    expect(a.found && a.count).toBe(1);
    if (!a.found) return;
    expect(a.farP50).toBeNull();
    expect(a.smGroups).toEqual([Array.from({ length: 132 }, (_, sm) => sm)]);
    expect(Math.abs(a.nearP50 - 280)).toBeLessThanOrEqual(1);
    expect(a.farSamples).toEqual([]);
  });

  it('reports a single group when every SM finds the same chunks near', () => {
    const a = analyseL2Partitions([launch({ ...base, groupOf: () => 0, seed: 15 })]);
    expect(a.found && a.count).toBe(2);
    if (a.found) expect(a.smGroups).toEqual([Array.from({ length: 132 }, (_, sm) => sm)]);
  });

  it('refuses series too short to split', () => {
    expect(analyseL2Partitions([[{ smId: 0, latenciesCycles: [280, 312] }]])).toEqual({
      found: false,
      reason: 'no SM timed 16 or more chunks',
    });
    expect(analyseL2Partitions([]).found).toBe(false);
  });
});
