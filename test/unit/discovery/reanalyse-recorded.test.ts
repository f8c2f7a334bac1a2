import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { reanalyse } from '../../../server/discovery/index.js';
import type { DiscoveryOutcome } from '../../../server/model/document.js';

/**
 * Raw series a discovery recorded on a real H100 80GB HBM3 (driver 580.159.04,
 * topod-probe, this strategy). The assertions are invariants of a sound
 * analysis on real noise, not the values it found.
 */
const recorded = JSON.parse(
  gunzipSync(readFileSync(new URL('./fixtures/h100-80gb-hbm3-l1-l2-run.json.gz', import.meta.url))).toString('utf8'),
) as DiscoveryOutcome;

describe('re-analysis of a recorded H100 discovery', () => {
  const outcome = reanalyse(recorded.raw);
  const { l1, l2, deviceMemory } = outcome.elements;
  const apiL2Bytes = outcome.device.l2CacheSizeBytes as number;

  it('reproduces the values the live run reported (confidences may move with the analysis)', () => {
    const withoutConfidence = (elements: DiscoveryOutcome['elements']) =>
      JSON.parse(JSON.stringify(elements, (key, value: unknown) => (key === 'confidence' ? undefined : value))) as unknown;
    expect(withoutConfidence(outcome.elements)).toEqual(withoutConfidence(recorded.elements));
    expect(Math.abs(l1!.size!.confidence! - recorded.elements.l1!.size!.confidence!)).toBeLessThan(0.05);
    expect(outcome.warnings).toEqual([]);
  });

  it('sees the L2 split into segments and derives their number from the API size', () => {
    const segment = l2?.segmentSize?.value;
    expect(segment).toBeLessThan(apiL2Bytes * 0.75);
    expect(l2?.amount?.value).toBe(Math.round(apiL2Bytes / segment!));
    expect(l2?.size).toMatchObject({ value: apiL2Bytes, source: 'api' });
    expect(l2?.segmentSize?.confidence).toBeGreaterThan(0.5);
  });

  it('orders the latencies L1 < L2 < device memory and keeps nearly every sample', () => {
    expect(l1!.latency!.mean).toBeLessThan(l2!.latency!.mean);
    expect(l2!.latency!.mean).toBeLessThan(deviceMemory!.latency!.mean);
    for (const latency of [l1!.latency!, l2!.latency!, deviceMemory!.latency!]) {
      expect(latency.p50).toBeLessThanOrEqual(latency.p95);
      expect(latency.confidence).toBeGreaterThan(0.8);
    }
  });

  it('finds an L1 size inside the L1/shared capacity the API reports per SM', () => {
    const perSmBytes = outcome.device.sharedMemPerMultiprocessorBytes as number;
    expect(l1?.size?.value).toBeGreaterThan(perSmBytes * 0.5);
    expect(l1?.size?.value).toBeLessThan(perSmBytes * 1.25);
    expect(l1?.size?.confidence).toBeGreaterThan(0.5);
  });
});
