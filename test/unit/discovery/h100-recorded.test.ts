/**
 * Re-analysis of a real H100 probe (the daemon's first probe on the GPU
 * machine, raw series as stored). No values are hard-coded: the checks are
 * physics and consistency with the device's own reported properties.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ANALYSIS_VERSION, reanalyse } from '../../../server/discovery/index.js';
import type { RawSeries } from '../../../server/model/document.js';

const fixture = JSON.parse(readFileSync('test/fixtures/h100/discovery-run.json', 'utf8')) as {
  metadata: Record<string, string>;
  raw: RawSeries[];
  document: { device: Record<string, number>; elements: unknown };
};

describe(`re-analysing the recorded ${fixture.metadata.gpu} probe (${fixture.metadata.recordedAt}, driver ${fixture.metadata.driverVersion})`, () => {
  const outcome = reanalyse(fixture.raw);
  const { l1, l2, deviceMemory } = outcome.elements;
  const device = fixture.document.device;

  it('orders latencies L1 < L2 < device memory', () => {
    expect(l1?.latency?.mean).toBeGreaterThan(0);
    expect(l2?.latency?.mean).toBeGreaterThan(l1?.latency?.mean as number);
    expect(deviceMemory?.latency?.mean).toBeGreaterThan(l2?.latency?.mean as number);
  });

  it('finds an L1 no larger than the unified L1/shared array and larger than a quarter of it', () => {
    const unified = device.sharedMemPerMultiprocessorBytes as number;
    expect(l1?.size?.value).toBeGreaterThan(unified / 4);
    expect(l1?.size?.value).toBeLessThanOrEqual(unified + 32 * 1024);
    expect(l1?.size?.source).toBe('microbenchmark');
  });

  it('sees the L2 split into segments smaller than the size the API reports', () => {
    const apiL2 = device.l2CacheSizeBytes as number;
    expect(l2?.size).toMatchObject({ value: apiL2, source: 'api' });
    expect(l2?.segmentSize?.value).toBeLessThan(apiL2);
    expect(l2?.segmentSize?.value).toBeGreaterThan(apiL2 / 4);
    expect(l2?.amount?.value).toBe(Math.round(apiL2 / (l2?.segmentSize?.value as number)));
  });

  it('converts cycles to nanoseconds with the measured clock', () => {
    const hz = outcome.clock?.smClockHz as number;
    expect(hz).toBeGreaterThan(0);
    expect(l1?.latency?.meanNs).toBeCloseTo(((l1?.latency?.mean as number) / hz) * 1e9, 1);
  });

  // The stored document came from the live run through the same analysis: an analysis change must bump ANALYSIS_VERSION.
  it.skipIf(fixture.metadata.analysisVersion !== ANALYSIS_VERSION)(`reproduces the stored document (analysis ${fixture.metadata.analysisVersion})`, () => {
    expect(outcome.elements).toEqual(fixture.document.elements);
  });
});
