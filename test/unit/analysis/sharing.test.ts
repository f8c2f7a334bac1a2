import { describe, expect, it } from 'vitest';
import {
  classifyReRead,
  countCaches,
  decideSharing,
  referenceOf,
  type PlacementTest,
  type ReReadVerdict,
} from '../../../server/analysis/sharing.js';

/** Synthetic re-read latencies: `misses` of `count` loads at the miss latency (spread over the walk), the rest at the hit latency, with a little jitter. */
function reRead(count: number, misses: number, hitCycles = 42, missCycles = 270): number[] {
  return Array.from({ length: count }, (_, i) => ((i * misses) % count < misses ? missCycles : hitCycles) + ((i * 7) % 5) - 2);
}

const REFERENCE = { hitCycles: 42, missCycles: 270 };

function verdict(evicted: boolean, confidence = 0.9): ReReadVerdict {
  return { found: true, evicted, missShare: evicted ? 1 : 0, sampleCount: 256, thresholdCycles: 156, confidence };
}

describe('classifyReRead', () => {
  it('calls a re-read that misses on every load evicted, with high confidence', () => {
    const v = classifyReRead(reRead(256, 256), REFERENCE);
    expect(v).toMatchObject({ found: true, evicted: true, missShare: 1, thresholdCycles: 156 });
    expect(v.found && v.confidence).toBeGreaterThan(0.9);
  });

  it('calls a re-read that hits (a stray disturbance aside) kept', () => {
    const samples = reRead(256, 0);
    samples[100] = 1800;
    const v = classifyReRead(samples, REFERENCE);
    expect(v).toMatchObject({ found: true, evicted: false, missShare: 0.004 });
    expect(v.found && v.confidence).toBeGreaterThan(0.9);
  });

  it('decides nothing when a third of the loads miss, and says so', () => {
    const v = classifyReRead(reRead(256, 80), REFERENCE);
    expect(v.found).toBe(false);
    expect(v).toMatchObject({ missShare: 0.313 });
    expect(!v.found && v.reason).toMatch(/31 % of the re-read missed/);
  });

  it('trusts a verdict at its limit less than a clean one, and fewer loads less than many', () => {
    const clean = classifyReRead(reRead(256, 256), REFERENCE);
    const limit = classifyReRead(reRead(256, 140), REFERENCE);
    const few = classifyReRead(reRead(16, 16), REFERENCE);
    expect(limit).toMatchObject({ found: true, evicted: true });
    expect(limit.found && clean.found && limit.confidence < clean.confidence).toBe(true);
    expect(few.found && clean.found && few.confidence < clean.confidence).toBe(true);
  });

  it('splits a re-read in two classes without a reference, and gives up on one class', () => {
    expect(classifyReRead(reRead(256, 200), null)).toMatchObject({ found: true, evicted: true, missShare: 0.781 });
    expect(classifyReRead(reRead(256, 0), null)).toMatchObject({ found: false });
    expect(classifyReRead([], REFERENCE)).toMatchObject({ found: false, reason: 'no timed loads' });
    expect(classifyReRead(reRead(8, 8), { hitCycles: 270, missCycles: 42 })).toMatchObject({ found: false });
  });

  it('takes its reference from the medians of hit and miss samples, when both exist', () => {
    expect(referenceOf([40, 42, 44], [260, 270, 900])).toEqual({ hitCycles: 42, missCycles: 270 });
    expect(referenceOf([], [270])).toBeNull();
  });
});

describe('decideSharing', () => {
  it('reports sharing when both directions evict and separate caches when both keep, at the weaker confidence', () => {
    expect(decideSharing(verdict(true, 0.9), verdict(true, 0.8))).toEqual({ found: true, shared: true, confidence: 0.8 });
    expect(decideSharing(verdict(false), verdict(false))).toEqual({ found: true, shared: false, confidence: 0.9 });
  });

  it('decides nothing when the directions disagree or one is unclear', () => {
    expect(decideSharing(verdict(true), verdict(false))).toMatchObject({ found: false, reason: expect.stringMatching(/disagree/) });
    const unclear = classifyReRead(reRead(256, 80), REFERENCE);
    expect(decideSharing(verdict(true), unclear)).toMatchObject({ found: false, reason: expect.stringMatching(/^second direction/) });
  });
});

describe('countCaches', () => {
  const test = (a: number, b: number, evicted: boolean): PlacementTest => ({ a, b, verdict: verdict(evicted) });
  const doubling = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

  it('counts one cache when every thread evicts thread 0', () => {
    expect(countCaches(doubling.map((b) => test(0, b, true)))).toEqual({
      found: true,
      count: 1,
      groups: [[0, ...doubling]],
      confidence: 0.9,
    });
  });

  it('counts the groups of threads that keep each other’s lines (two halves of an SM)', () => {
    // Warps 1 and 2 … thread 32's group reached a second cache; 64 joins thread 0 again; 32 and 96 checked against each other.
    const tests = [...doubling.map((b) => test(0, b, b !== 32)), test(32, 96, true), test(0, 96, false)];
    const count = countCaches(tests);
    expect(count).toMatchObject({ found: true, count: 2 });
    expect(count.found && count.groups).toEqual([
      [0, 1, 2, 4, 8, 16, 64, 128, 256, 512],
      [32, 96],
    ]);
  });

  it('counts four caches only when the threads that kept thread 0’s lines were told apart', () => {
    const round1 = [test(0, 32, false), test(0, 64, false), test(0, 96, false), test(0, 128, true)];
    expect(countCaches(round1)).toMatchObject({ found: false, reason: expect.stringMatching(/never tested against each other/) });
    const round2 = [test(32, 64, false), test(32, 96, false), test(64, 96, false)];
    expect(countCaches([...round1, ...round2])).toMatchObject({ found: true, count: 4 });
  });

  it('gives no count when a test was unclear, or none was run', () => {
    const unclear: PlacementTest = { a: 0, b: 4, verdict: classifyReRead(reRead(256, 80), REFERENCE) };
    expect(countCaches([test(0, 1, true), unclear])).toMatchObject({ found: false, reason: expect.stringMatching(/^threads 0 and 4/) });
    expect(countCaches([])).toEqual({ found: false, reason: 'no placement tested' });
  });
});
