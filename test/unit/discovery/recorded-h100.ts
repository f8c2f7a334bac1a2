/**
 * Checks for raw series recorded on a real H100 (SXM5 / 80GB HBM3), shared by
 * the recorded-series tests. They assert what the hardware is, never what an
 * earlier analysis read from it: a corrected analysis must still pass them.
 * Reproduction of a fixture's stored document is asserted only when the
 * fixture says it was made by the current ANALYSIS_VERSION; otherwise the
 * same test checks that today's re-analysis is still physical.
 */
import { describe, expect, it } from 'vitest';
import { ANALYSIS_VERSION, reanalyse } from '../../../server/discovery/index.js';
import type { DeviceProperties, HelloResult } from '../../../server/protocol/ops.js';
import type { DiscoveryOutcome, RawSeries } from '../../../server/model/document.js';

const KIB = 1024;
/** An H100 SM has 256 KiB of combined L1 / shared memory; the L1 is what the carve-out leaves (the probe keeps a few KiB of shared for samples). */
const H100_L1_SHARED_BYTES = 256 * KIB;
/** Even the largest shared carve-out a pointer chase needs leaves more than this to the L1. */
const H100_L1_MIN_BYTES = 200 * KIB;

export interface RecordedFixture {
  label: string;
  raw: RawSeries[];
  /** The elements stored with the raw series, as the analysis of that day made them. */
  storedElements: DiscoveryOutcome['elements'];
  /** The analysis that made storedElements; null when the fixture does not say. */
  analysisVersion: string | null;
}

function recordedDevice(raw: readonly RawSeries[]): DeviceProperties {
  const hello = raw.find((series) => series.op === 'hello')?.result as HelloResult | undefined;
  const device = hello?.devices[0];
  if (!device) throw new Error('the fixture has no hello series with a device');
  return device;
}

/** Physics of an H100 that any sound analysis of its raw series must show. */
export function expectH100Physics(outcome: DiscoveryOutcome, device: DeviceProperties): void {
  const { l1, l2, deviceMemory } = outcome.elements;

  // L1: a per-SM cache inside the combined L1/shared array, measured.
  expect(l1?.size?.source).toBe('microbenchmark');
  expect(l1!.size!.value).toBeGreaterThan(H100_L1_MIN_BYTES);
  expect(l1!.size!.value).toBeLessThan(H100_L1_SHARED_BYTES);
  expect(l1!.size!.confidence).toBeGreaterThan(0.5);

  // L2: two partitions; one SM's loads allocate in its near segment, a plausible fraction of the API size.
  const apiL2 = device.l2CacheSizeBytes;
  expect(l2?.size).toMatchObject({ value: apiL2, source: 'api' });
  const segment = l2!.segmentSize!.value;
  expect(segment).toBeGreaterThan(apiL2 / 4);
  expect(segment).toBeLessThan(apiL2 * 0.75);
  expect(l2!.amount).toMatchObject({ value: Math.round(apiL2 / segment), per: 'gpu' });
  expect(l2!.amount!.value).toBeGreaterThanOrEqual(2);
  expect(deviceMemory?.size).toMatchObject({ value: device.totalMemoryBytes, source: 'api' });

  // Latencies: each level further away is slower, and a miss costs what the next level adds.
  const [l1Latency, l2Latency, memoryLatency] = [l1!.latency!, l2!.latency!, deviceMemory!.latency!];
  expect(l1Latency.mean).toBeGreaterThan(0);
  expect(l1Latency.mean).toBeLessThan(l2Latency.mean);
  expect(l2Latency.mean).toBeLessThan(memoryLatency.mean);
  for (const latency of [l1Latency, l2Latency, memoryLatency]) {
    expect(latency.p50).toBeLessThanOrEqual(latency.p95);
    expect(latency.confidence).toBeGreaterThan(0.8);
  }
  expect(l1!.missPenalty!.value).toBeGreaterThan(0);
  expect(l1!.missPenalty!.value).toBeLessThan(memoryLatency.mean);
  expect(l2!.missPenalty!.value).toBeGreaterThan(0);

  // Cycles become nanoseconds at the measured SM clock.
  const hz = outcome.clock!.smClockHz!;
  expect(hz).toBeGreaterThan(0);
  for (const latency of [l1Latency, l2Latency, memoryLatency]) expect(latency.meanNs).toBeCloseTo((latency.mean / hz) * 1e9, 1);
}

/** The tests every recorded H100 fixture gets: physics of today's re-analysis, and reproduction when the analysis is the same. */
export function describeRecordedH100(fixture: RecordedFixture): void {
  describe(`re-analysing ${fixture.label}`, () => {
    const outcome = reanalyse(fixture.raw);
    const device = recordedDevice(fixture.raw);

    it('shows the physics of an H100: L1 inside the 256 KiB L1/shared array, L2 in segments, latencies L1 < L2 < device memory', () => {
      expect(device.name).toMatch(/H100/);
      expectH100Physics(outcome, device);
    });

    const same = fixture.analysisVersion === ANALYSIS_VERSION;
    const title = same
      ? `reproduces the stored document (made by analysis ${ANALYSIS_VERSION}, the current one)`
      : `was stored by analysis ${fixture.analysisVersion ?? '(unrecorded)'}, not the current ${ANALYSIS_VERSION}: today's re-analysis is physical and complete`;
    it(title, () => {
      if (same) {
        expect(outcome.elements).toEqual(fixture.storedElements);
      } else {
        // Not the old numbers (a corrected analysis may read them differently), but the same elements, physical.
        expect(Object.keys(outcome.elements).sort()).toEqual(Object.keys(fixture.storedElements).sort());
        expectH100Physics(outcome, device);
      }
    });
  });
}
