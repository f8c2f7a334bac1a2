import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortedNumbers } from '../../../server/analysis/sort-numbers.js';

/** The reference: V8's comparison sort of a Float64Array (what sortedNumbers must equal, value for value). */
const compared = (values: readonly number[]) => Array.from(Float64Array.from(values).sort());
const sorted = (values: readonly number[]) => Array.from(sortedNumbers(values));

describe('sortedNumbers', () => {
  it('sorts integer samples of a narrow range (one counting pass) exactly as Float64Array#sort', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -50, max: 2000 }), { minLength: 64, maxLength: 3000 }), (values) => {
        expect(sorted(values)).toEqual(compared(values));
      }),
    );
  });

  it('sorts integer samples of a wide range (two radix passes) exactly as Float64Array#sort', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 4_000_000 }), { minLength: 64, maxLength: 3000 }), (values) => {
        expect(sorted(values)).toEqual(compared(values));
      }),
    );
    // A latency sweep: most loads near one level, rare disturbances tens of thousands of cycles out.
    const latencies = Array.from({ length: 4096 }, (_, i) => (i % 97 === 0 ? 40_000 + i : 30 + ((i * 7919) % 13)));
    expect(sorted(latencies)).toEqual(compared(latencies));
  });

  it('falls back to the comparison sort for fractions, NaN, −0, huge ranges and short arrays, in its order', () => {
    const many = (extra: number[]) => [...Array.from({ length: 100 }, (_, i) => (i * 37) % 101), ...extra];
    for (const values of [many([0.5]), many([Number.NaN]), many([-0, 0]), many([2 ** 40]), [3, 1, 2], many([Infinity, -Infinity])]) {
      expect(sorted(values).map((value) => (Object.is(value, -0) ? '-0' : value))).toEqual(
        compared(values).map((value) => (Object.is(value, -0) ? '-0' : value)),
      );
    }
    fc.assert(
      fc.property(fc.array(fc.double(), { minLength: 0, maxLength: 300 }), (values) => {
        expect(sorted(values)).toEqual(compared(values));
      }),
    );
  });

  it('returns a new array and leaves its input alone', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    const out = sortedNumbers(values);
    expect(out).toBeInstanceOf(Float64Array);
    expect(values[0]).toBe(100);
    expect(out[0]).toBe(1);
  });
});
