/**
 * Amount and physical sharing re-analysed from raw series recorded on a real
 * H100 SXM5 (issue 9): run 1 of test/fixtures/h100/sharing-farnear-3-runs.json.gz
 * carries the per-SM size series the analysis takes its reference latencies
 * from. The expectations are the acceptance for an H100 (MT4G
 * §IV-F/§IV-G, the thesis): one L1 per SM, shared with the texture and
 * read-only paths; the constant L1 apart.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildSharing } from '../../../server/discovery/strategies/sharing.js';
import type { HelloResult } from '../../../server/protocol/ops.js';
import type { RawSeries } from '../../../server/model/document.js';

interface Recorded {
  runs: Array<{ run: number; raw: RawSeries[] }>;
}

const recorded = JSON.parse(
  gunzipSync(readFileSync(new URL('../../fixtures/h100/sharing-farnear-3-runs.json.gz', import.meta.url))).toString(),
) as Recorded;

describe('amount and sharing from an H100’s recorded series', () => {
  const raw = recorded.runs[0]!.raw;
  const device = (raw.find((s) => s.op === 'hello')!.result as HelloResult).devices[0]!;
  const built = buildSharing(raw, device);

  it('finds L1, texture and read-only one physical cache and the constant L1 apart, symmetric, without warnings', () => {
    expect(built.warnings).toEqual([]);
    const { l1, texture, readOnly, constantL1 } = built.elements;
    const sorted = (names: readonly string[] | undefined) => [...(names ?? ['(absent)'])].sort();
    expect(sorted(l1?.sharedWith)).toEqual(['readOnly', 'texture']);
    expect(sorted(texture?.sharedWith)).toEqual(['l1', 'readOnly']);
    expect(sorted(readOnly?.sharedWith)).toEqual(['l1', 'texture']);
    expect(constantL1?.sharedWith).toEqual([]);
  });

  it('counts one of each per SM, from every thread placement the probe tried', () => {
    for (const name of ['l1', 'texture', 'readOnly', 'constantL1'] as const) {
      expect(built.elements[name]?.amount, name).toMatchObject({ value: 1, per: 'sm', source: 'microbenchmark' });
      expect(built.elements[name]!.amount!.confidence).toBeGreaterThan(0.5);
    }
    // the evidence is kept: every ordered pair's re-read is a raw series
    expect(raw.filter((s) => /^sharing\.[a-zA-Z0-9]+\.[a-zA-Z0-9]+$/.test(s.name) && !s.name.startsWith('sharing.amount.')).length).toBe(
      12,
    );
  });
});

describe('the L2 partitions’ extra figures from the same H100 runs', () => {
  it('refuses l2.farnear latencies that never waited for their data, and still reads the persisting window’s effect', async () => {
    const { buildL2Partitions } = await import('../../../server/discovery/strategies/l2-structure.js');
    for (const { raw } of recorded.runs) {
      const calibration = raw.find((s) => s.op === 'calibrate')!.result as import('../../../server/protocol/ops.js').CalibrateResult;
      const { partitions, warnings } = buildL2Partitions(raw, calibration);
      expect(partitions?.count).toBe(2);
      expect(warnings.some((w) => /l2\.farnear timed loads read under \d+ cycles/.test(w))).toBe(true);
      expect(partitions?.farBeyondCapacityLatency).toBeUndefined();
      expect(partitions?.deviceMemoryNearLatency).toBeUndefined();
      expect(partitions?.sharedDataCapacityBytes).toBeUndefined();
      // A window that persists keeps its lines in the L2 through two streams of twice the L2; without it they are gone.
      const window = partitions!.persistingWindow!;
      expect(window.hitRateWith).toBeGreaterThan(0.5);
      expect(window.hitRateWithout).toBeLessThan(0.2);
    }
  });
});
