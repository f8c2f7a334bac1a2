import { describe, expect, it } from 'vitest';
import { changePointConfidence, combineConfidences, latencyConfidence } from '../../../server/analysis/index.js';

const clean = { pValue: 0, separation: 1, consistency: 1, relativeResolution: 0, atEdge: false };

describe('confidence model', () => {
  it('is 1 for perfect evidence and falls with each weakness', () => {
    expect(changePointConfidence(clean)).toBe(1);
    for (const weaker of [
      { ...clean, pValue: 0.2 },
      { ...clean, separation: 0.3 },
      { ...clean, consistency: 0.8 },
      { ...clean, relativeResolution: 0.05 },
      { ...clean, atEdge: true },
    ]) {
      const value = changePointConfidence(weaker);
      expect(value).toBeLessThan(1);
      expect(value).toBeGreaterThanOrEqual(0);
    }
  });

  it('rates a tight latency population above a noisy, outlier-ridden one', () => {
    const tight = latencyConfidence({ mean: 200, p50: 200, p95: 204, stdev: 2, sampleCount: 1000, droppedCount: 5 });
    const noisy = latencyConfidence({ mean: 200, p50: 190, p95: 320, stdev: 80, sampleCount: 60, droppedCount: 40 });
    expect(tight).toBeGreaterThan(0.9);
    expect(noisy).toBeLessThan(tight);
    expect(latencyConfidence({ mean: 0, p50: 0, p95: 0, stdev: 0, sampleCount: 0, droppedCount: 0 })).toBe(0);
  });

  it('combines independent confidences as a product clamped to 0..1', () => {
    expect(combineConfidences(0.5, 0.5)).toBe(0.25);
    expect(combineConfidences(2, Number.NaN)).toBe(0);
  });
});
