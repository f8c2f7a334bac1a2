import { describe, expect, it } from 'vitest';
import { dropOutliersIqr, dropOutliersMad, mad, summarizeLatency, trimmedMean } from '../../../server/analysis/index.js';

const quiet = [30, 31, 29, 30, 32, 30, 31, 29, 30, 30, 31, 30];

describe('robust reductions', () => {
  it('estimates sigma with the scaled MAD', () => {
    expect(mad([1, 2, 3, 4, 5, 6, 7])).toBeCloseTo(1.4826 * 2);
  });

  it('drops a disturbance by MAD and by IQR but keeps the body', () => {
    const withOutlier = [...quiet, 1500];
    expect(dropOutliersMad(withOutlier)).toEqual(quiet);
    expect(dropOutliersIqr(withOutlier)).toEqual(quiet);
  });

  it('keeps values off the median when the IQR of integer cycles is zero', () => {
    const flat = [34, 34, 34, 34, 34, 34, 35, 33, 34, 34];
    expect(dropOutliersIqr(flat)).toEqual(flat);
  });

  it('keeps both modes of a bimodal near/far population', () => {
    const bimodal = [...Array(50).fill(176), ...Array(50).fill(268), 1900];
    expect(dropOutliersIqr(bimodal)).toHaveLength(100);
  });

  it('trims both ends', () => {
    expect(trimmedMean([1, 2, 3, 4, 100], 0.2)).toBe(3);
    expect(() => trimmedMean([1], 0.5)).toThrow(RangeError);
  });

  it('summarises latency without the outliers and minus the clock overhead', () => {
    const summary = summarizeLatency([...quiet, 2000], 6);
    expect(summary.droppedCount).toBe(1);
    expect(summary.sampleCount).toBe(quiet.length);
    expect(summary.mean).toBeCloseTo(quiet.reduce((a, b) => a + b, 0) / quiet.length - 6);
    expect(summary.p50).toBe(24);
    expect(summary.p95).toBeGreaterThanOrEqual(summary.p50);
  });
});
