/**
 * The L2 as it is, re-analysed from raw series recorded on a real H100 SXM5
 * (three consecutive discoveries, issue 9): partitions and their SM groups,
 * far-partition hits past one partition, near and far device memory, the
 * capacity for data both groups read, and the persisting window. The checks
 * are orderings and physics the issue states, never an earlier reading.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { COMPUTE_STRATEGY } from '../../../server/discovery/strategies/compute.js';
import { buildL2Partitions } from '../../../server/discovery/strategies/l2-structure.js';
import type { CalibrateResult, HelloResult } from '../../../server/protocol/ops.js';
import type { RawSeries } from '../../../server/model/document.js';

interface Recorded {
  runs: Array<{ run: number; raw: RawSeries[] }>;
}

const recorded = JSON.parse(
  gunzipSync(readFileSync(new URL('../../fixtures/h100/l2-structure-3-runs.json.gz', import.meta.url))).toString(),
) as Recorded;

describe('the L2 structure from an H100’s recorded series', () => {
  const runs = recorded.runs.map(({ raw }) => {
    const device = (raw.find((s) => s.op === 'hello')!.result as HelloResult).devices[0]!;
    const calibration = raw.find((s) => s.op === 'calibrate')!.result as CalibrateResult;
    return { device, ...buildL2Partitions(raw, calibration), compute: COMPUTE_STRATEGY.build(raw, device, calibration).compute! };
  });

  it('has every figure in every run, without warnings, the same SM groups each time', () => {
    expect(runs).toHaveLength(3);
    for (const { partitions, warnings } of runs) {
      expect(warnings).toEqual([]);
      expect(partitions?.count).toBe(2);
    }
    expect(new Set(runs.map(({ partitions }) => JSON.stringify(partitions!.smGroups))).size).toBe(1);
  });

  it('orders the latency classes: near hit < far hit < far-partition hit past capacity < near device memory < far device memory', () => {
    for (const { partitions } of runs) {
      const p = partitions!;
      const order = [p.nearLatency, p.farLatency!, p.farBeyondCapacityLatency!, p.deviceMemoryNearLatency!, p.deviceMemoryFarLatency!].map(
        (l) => l.p50,
      );
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      expect(new Set(order).size).toBe(order.length);
      expect(p.farNearConfidence).toBeGreaterThan(0.9);
    }
  });

  it('keeps data both groups read once per partition: the shared-data capacity is about one partition, not both', () => {
    for (const { partitions, device } of runs) {
      const capacity = partitions!.sharedDataCapacityBytes!;
      expect(capacity).toBeGreaterThan(device.l2CacheSizeBytes * 0.35);
      expect(capacity).toBeLessThan(device.l2CacheSizeBytes * 0.65);
    }
  });

  it('measures the persisting window: its lines survive two streams of twice the L2 with it, not without', () => {
    for (const { partitions } of runs) {
      const window = partitions!.persistingWindow!;
      expect(window.hitRateWith).toBeGreaterThan(0.5);
      expect(window.hitRateWithout).toBeLessThan(0.2);
    }
  });

  it('puts every GPC wholly in one partition group on this board too', () => {
    for (const { partitions, compute } of runs) {
      const groupOf = new Map<number, number>();
      for (const [g, sms] of partitions!.smGroups.entries()) for (const sm of sms) groupOf.set(sm, g);
      for (const sms of [...compute.gpcs!.smIds, ...compute.gpcs!.tpcsOfUnknownGpc])
        expect(new Set(sms.map((sm) => groupOf.get(sm))).size).toBe(1);
    }
  });
});
