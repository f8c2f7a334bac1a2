import { describe, expect, it } from 'vitest';
import { EmptySampleError, mean, median, percentile, sortedAscending, stdev } from '../../../server/analysis/index.js';

describe('descriptive statistics', () => {
  it('takes the mean of the two middle values for an even count', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([5, 1, 3])).toBe(3);
  });

  it('interpolates percentiles between closest ranks', () => {
    const values = [10, 20, 30, 40, 50];
    expect(percentile(values, 0)).toBe(10);
    expect(percentile(values, 100)).toBe(50);
    expect(percentile(values, 25)).toBe(20);
    expect(percentile(values, 90)).toBeCloseTo(46);
    expect(() => percentile(values, 101)).toThrow(RangeError);
  });

  it('computes the mean and the sample standard deviation', () => {
    expect(mean([1, 2, 3, 4])).toBe(2.5);
    expect(stdev([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(2.138, 3);
    expect(stdev([7])).toBe(0);
  });

  it('sorts numerically, not as strings', () => {
    expect(sortedAscending([10, 9, 100, 1])).toEqual([1, 9, 10, 100]);
  });

  it('refuses an empty sample with a stable code', () => {
    expect(() => mean([])).toThrow(EmptySampleError);
    try {
      median([]);
    } catch (error) {
      expect((error as EmptySampleError).code).toBe('TOPOD_ERR_EMPTY_SAMPLE');
    }
  });
});
