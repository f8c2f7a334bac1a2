/**
 * The compute section re-analysed from raw series recorded on a real H100
 * SXM5 (three consecutive discoveries through the daemon, issue 10). The
 * checks are what the hardware is and what the thread-block-cluster paper
 * found, never the figures an earlier analysis read from the series.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { clustersTheMapHolds } from '../../../server/discovery/strategies/compute-gpc.js';
import { COMPUTE_STRATEGY } from '../../../server/discovery/strategies/compute.js';
import type { CalibrateResult, HelloResult } from '../../../server/protocol/ops.js';
import type { ComputeTopology } from '../../../server/model/compute-schema.js';
import type { RawSeries } from '../../../server/model/document.js';

interface Recorded {
  runs: Array<{ run: number; raw: RawSeries[] }>;
}

const recorded = JSON.parse(
  gunzipSync(readFileSync(new URL('../../fixtures/h100/compute-3-runs.json.gz', import.meta.url))).toString(),
) as Recorded;

function rebuild(raw: RawSeries[]): { compute: ComputeTopology; warnings: string[]; sms: number } {
  const device = (raw.find((s) => s.op === 'hello')!.result as HelloResult).devices[0]!;
  const calibration = raw.find((s) => s.op === 'calibrate')!.result as CalibrateResult;
  const built = COMPUTE_STRATEGY.build(raw, device, calibration);
  return { compute: built.compute!, warnings: built.warnings, sms: device.multiprocessorCount };
}

describe('the compute section from an H100’s recorded series', () => {
  const runs = recorded.runs.map((run) => rebuild(run.raw));

  it('has three runs, each rebuilt without warnings', () => {
    expect(runs).toHaveLength(3);
    for (const { compute, warnings } of runs) {
      expect(compute.clusters.supported).toBe(true);
      expect(warnings).toEqual([]);
    }
  });

  it('places every SM: GPCs plus the TPCs kept out of larger clusters sum to the SM count, the same map in all three runs', () => {
    for (const { compute, sms } of runs) {
      const gpcs = compute.gpcs!;
      expect(gpcs.smsPerGpc.reduce((a, b) => a + b, 0) + gpcs.tpcsOfUnknownGpc.flat().length).toBe(sms);
      expect(gpcs.unplacedSmIds).toEqual([]);
      expect(gpcs.confidence).toBe(1);
      // GPCs are unequal on this cut-down die, and every TPC of unknown GPC is two SMs.
      expect(new Set(gpcs.smsPerGpc).size).toBeGreaterThan(1);
      for (const tpc of gpcs.tpcsOfUnknownGpc) expect(tpc).toHaveLength(2);
      // Clusters of two always landed on the same SM pairs: the TPCs are told apart.
      expect(gpcs.tpcs?.flat().sort((a, b) => a - b)).toEqual(compute.smIds);
    }
    const maps = runs.map(({ compute }) => JSON.stringify([compute.gpcs!.smIds, compute.gpcs!.tpcsOfUnknownGpc]));
    expect(new Set(maps).size).toBe(1);
  });

  it('explains the runtime’s active clusters for every size, and so the idle SMs', () => {
    for (const { compute, sms } of runs) {
      expect(compute.gpcs!.occupancyAgreement).toBe(1);
      const groups = [...compute.gpcs!.smIds, ...compute.gpcs!.tpcsOfUnknownGpc];
      for (const row of compute.clusters.bySize.filter((r) => r.clusterSize >= 2)) {
        expect(row.activeClusters, `size ${row.clusterSize}`).toBe(clustersTheMapHolds(groups, row.clusterSize));
        expect(row.idleSms).toBe(sms - row.activeClusters * row.clusterSize);
        expect(row.measuredIdleSms).toBe(row.idleSms);
      }
    }
  });

  it('orders barriers and DSMEM as the paper did: cluster.sync ≈ arrive + wait, local < DSMEM < L2, push > pull', () => {
    for (const { compute } of runs) {
      for (const row of compute.clusters.sync) {
        expect(row.syncthreads.p50).toBeLessThan(row.wait.p50 + row.arrive.p50);
        expect(row.clusterSync.p50).toBeGreaterThan(row.arrive.p50);
        expect(Math.abs(row.clusterSync.p50 - (row.arrive.p50 + row.wait.p50)) / row.clusterSync.p50).toBeLessThan(0.2);
        expect(row.gridSync.p50).toBeGreaterThan(row.clusterSync.p50);
      }
      const dsmem = compute.clusters.dsmem!;
      expect(dsmem.localLatency.p50).toBeLessThan(dsmem.remoteLatency.p50);
      expect(dsmem.remoteLatency.p50).toBeLessThan(dsmem.l2Latency.p50);
      expect(dsmem.pushBandwidth.value).toBeGreaterThan(dsmem.pullBandwidth.value);
    }
  });
});
