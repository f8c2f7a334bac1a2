import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileDriver, hasGxx, runDriver } from './gxx.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Length of the cycle through node 0 (the walk a chase makes). */
function cycleLength(next: number[]): number {
  let j = 0;
  let steps = 0;
  do {
    j = next[j]!;
    steps += 1;
  } while (j !== 0 && steps <= next.length);
  return steps;
}

describe.skipIf(!hasGxx)('native/probe chain order (needs g++; skipped when absent)', () => {
  let dir = '';
  let binary = '';
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'topod-chain-'));
    binary = compileDriver(path.join(here, 'chain-order-driver.cpp'), dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const chains = (queries: string[]) => runDriver(binary, queries).map((line) => line.split(' ').map(Number));

  it('sequential chains visit i -> i+1 and wrap', () => {
    const [five, one] = chains(['5 sequential 0', '1 sequential 0']);
    expect(five).toEqual([1, 2, 3, 4, 0]);
    expect(one).toEqual([0]);
  });

  it('random chains are one cycle through every node, for many sizes and seeds', () => {
    const queries = [2, 3, 7, 64, 1000, 4099].flatMap((n) => [1, 2, 99].map((seed) => `${n} random ${seed}`));
    for (const [i, next] of chains(queries).entries()) {
      expect(cycleLength(next), queries[i]).toBe(next.length);
      expect(new Set(next).size, queries[i]).toBe(next.length);
    }
  });

  it('a seed reproduces its chain and another seed gives another chain', () => {
    const [a, b, c] = chains(['256 random 42', '256 random 42', '256 random 43']);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it('random chains do not walk sequentially', () => {
    const [next] = chains(['1024 random 7']);
    const sequentialSteps = next!.filter((n, i) => n === i + 1).length;
    expect(sequentialSteps).toBeLessThan(next!.length / 10);
  });
});
