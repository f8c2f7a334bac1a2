/**
 * Discovery II re-analysed from raw series recorded on a real H100 SXM5
 * (three consecutive discoveries through the daemon, issue 9): the bandwidth
 * search and the L2 partitions. The checks are the acceptance and
 * what the hardware is, never the figures an earlier analysis read.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildBandwidth, copyReferenceBytesPerSecond } from '../../../server/discovery/strategies/bandwidth.js';
import { COMPUTE_STRATEGY } from '../../../server/discovery/strategies/compute.js';
import { buildL2Partitions } from '../../../server/discovery/strategies/l2-structure.js';
import type { CalibrateResult, HelloResult } from '../../../server/protocol/ops.js';
import type { RawSeries } from '../../../server/model/document.js';

const TIB = 1024 ** 4;

interface Recorded {
  runs: Array<{ run: number; raw: RawSeries[] }>;
}

const recorded = JSON.parse(
  gunzipSync(readFileSync(new URL('../../fixtures/h100/discovery-ii-3-runs.json.gz', import.meta.url))).toString(),
) as Recorded;

function rebuild(raw: RawSeries[]) {
  const device = (raw.find((s) => s.op === 'hello')!.result as HelloResult).devices[0]!;
  const calibration = raw.find((s) => s.op === 'calibrate')!.result as CalibrateResult;
  return {
    device,
    bandwidth: buildBandwidth(raw, device),
    copyBytesPerSecond: copyReferenceBytesPerSecond(raw),
    partitions: buildL2Partitions(raw, calibration),
    compute: COMPUTE_STRATEGY.build(raw, device, calibration).compute!,
  };
}

describe('Discovery II from an H100’s recorded series', () => {
  const runs = recorded.runs.map((run) => rebuild(run.raw));

  it('reads the L2 at ≥ 4.5 TiB/s and device memory at ≥ 90 % of the same run’s device-to-device copy (bytes read + written)', () => {
    expect(runs).toHaveLength(3);
    for (const { bandwidth, copyBytesPerSecond } of runs) {
      const l2 = bandwidth.elements.l2!;
      const memory = bandwidth.elements.deviceMemory!;
      expect(l2.readBandwidth!.value).toBeGreaterThanOrEqual(4.5 * TIB);
      expect(copyBytesPerSecond).not.toBeNull();
      expect(memory.readBandwidth!.value).toBeGreaterThanOrEqual(0.9 * copyBytesPerSecond!);
      // Writes are reported with the same care: a geometry, a confidence, a note naming the search.
      for (const value of [l2.writeBandwidth!, memory.writeBandwidth!]) {
        expect(value).toMatchObject({ unit: 'bytes/s', source: 'microbenchmark' });
        expect(value.note).toMatch(/best of \d+ launch geometries/);
      }
      // The L2 is faster than device memory, both ways.
      expect(l2.readBandwidth!.value).toBeGreaterThan(memory.readBandwidth!.value);
    }
  });

  it('finds two L2 partitions, the same SM groups in all three runs, far hits slower than near ones', () => {
    const groups = runs.map(({ partitions }) => {
      const p = partitions.partitions!;
      expect(p.count).toBe(2);
      expect(p.farLatency!.p50).toBeGreaterThan(p.nearLatency.p50);
      expect(p.smGroups.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: runs[0]!.device.multiprocessorCount }, (_, sm) => sm));
      return JSON.stringify(p.smGroups);
    });
    expect(new Set(groups).size).toBe(1);
  });

  it('puts every GPC, and every TPC of unknown GPC, wholly in one partition group: two independent measurements agree', () => {
    for (const { partitions, compute } of runs) {
      const groupOf = new Map<number, number>();
      for (const [g, sms] of partitions.partitions!.smGroups.entries()) for (const sm of sms) groupOf.set(sm, g);
      for (const sms of [...compute.gpcs!.smIds, ...compute.gpcs!.tpcsOfUnknownGpc]) {
        expect(new Set(sms.map((sm) => groupOf.get(sm))).size, `SMs ${sms.join(',')}`).toBe(1);
      }
    }
  });
});
