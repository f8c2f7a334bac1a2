/**
 * Three consecutive full discoveries recorded on one H100 80GB HBM3
 * (test/fixtures/h100/discovery-3-runs.json.gz: validate:gpu --runs 3 --raw
 * through the daemon, issue 8). Each run's raw series are re-analysed here
 * without the GPU. Asserted: what the hardware is (ordering of levels,
 * granularities that nest, sizes that agree between the paths through one
 * physical cache) and that the three runs agree with each other — never the
 * numbers one analysis read from them.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { reanalyse } from '../../../server/discovery/index.js';
import type { DiscoveryOutcome, GpuTopologyDocument, RawSeries } from '../../../server/model/document.js';
import { analysedElements } from '../../helpers/fakes.js';
import { describeRecordedH100 } from './recorded-h100.js';

interface RecordedRuns {
  metadata: { analysisVersion: string };
  runs: Array<{ run: number; document: GpuTopologyDocument; raw: RawSeries[] }>;
}

const recorded = JSON.parse(
  gunzipSync(readFileSync(new URL('../../fixtures/h100/discovery-3-runs.json.gz', import.meta.url))).toString('utf8'),
) as RecordedRuns;

for (const { run, document, raw } of recorded.runs) {
  describeRecordedH100({
    label: `full discovery run ${run} of 3`,
    raw,
    storedElements: analysedElements(document.elements) as DiscoveryOutcome['elements'],
    analysisVersion: document.probe.analysisVersion,
  });
}

const outcomes = recorded.runs.map(({ raw }) => reanalyse(raw));

describe('every NVIDIA memory element of the recorded H100', () => {
  it.each(outcomes.map((outcome, i) => [i + 1, outcome] as const))(
    'run %i: levels nest, granularities nest, the L1 paths share one cache',
    (_run, outcome) => {
      const e = outcome.elements;
      expect(Object.keys(e).sort()).toEqual(['constantL1', 'constantL15', 'deviceMemory', 'l1', 'l2', 'readOnly', 'shared', 'texture']);
      expect(outcome.warnings).toEqual([]);
      const latency = (name: keyof typeof e) => e[name]!.latency!.mean;

      // Each level further away is slower; the constant path has its own two levels before the L2.
      for (const near of ['l1', 'readOnly', 'texture', 'shared', 'constantL1'] as const) expect(latency(near)).toBeLessThan(latency('l2'));
      expect(latency('constantL1')).toBeLessThan(latency('constantL15'));
      expect(latency('constantL15')).toBeLessThan(latency('l2'));
      expect(latency('l2')).toBeLessThan(latency('deviceMemory'));
      // Texture fetches go through the same L1 at a higher cost than plain loads.
      expect(latency('texture')).toBeGreaterThan(latency('l1'));

      // A line holds whole fetches; the L2 fills at least its own sector from device memory.
      for (const name of ['l1', 'texture', 'readOnly', 'constantL1', 'l2'] as const) {
        expect(e[name]!.lineSize!.value).toBeGreaterThanOrEqual(e[name]!.fetchGranularity!.value);
        expect(e[name]!.lineSize!.confidence).toBeGreaterThanOrEqual(0.9);
        expect(e[name]!.fetchGranularity!.confidence).toBeGreaterThanOrEqual(0.9);
      }
      expect(e.l2!.fillGranularity!.value).toBeGreaterThanOrEqual(e.l2!.fetchGranularity!.value);
      expect(e.l2!.fillGranularity!.note).toContain(`${outcome.device.maxL2FetchGranularityBytes} B`);
      // The L1.5 fetches more than the constant L1 holds in one line.
      expect(e.constantL15!.fetchGranularity!.value).toBeGreaterThan(e.constantL1!.lineSize!.value);

      // L1, texture and read-only are one physical cache: their sizes agree within 3 %.
      const l1 = e.l1!.size!.value;
      for (const path of ['texture', 'readOnly'] as const) expect(Math.abs(e[path]!.size!.value - l1) / l1).toBeLessThan(0.03);
      // The constant L1 is tiny beside it; the L1.5 holds at least the whole constant bank, so it is a bound.
      expect(e.constantL1!.size!.value).toBeLessThan(l1 / 16);
      expect(e.constantL15!.size).toMatchObject({ bound: 'lower', value: outcome.device.totalConstMemBytes });
      // Shared memory per SM is the runtime's figure.
      expect(e.shared!.size).toEqual({ value: outcome.device.sharedMemPerMultiprocessorBytes, unit: 'bytes', source: 'api' });
      for (const name of ['l1', 'texture', 'readOnly', 'constantL1'] as const)
        expect(e[name]!.size!.confidence).toBeGreaterThanOrEqual(0.9);

      // Miss penalties are the next level's latency minus this one's.
      expect(e.l1!.missPenalty).toMatchObject({ source: 'derived', value: Math.round((latency('l2') - latency('l1')) * 100) / 100 });
      expect(e.constantL1!.missPenalty!.value).toBeCloseTo(latency('constantL15') - latency('constantL1'), 1);

      // The carveout the per-SM benchmarks ran under is recorded: maximum L1, a block holding the samples.
      expect(outcome.carveout).toMatchObject({
        preferredSharedPercent: 0,
        reservedSharedBytesPerBlock: outcome.device.reservedSharedMemPerBlockBytes,
      });
      expect(outcome.carveout!.blockSharedBytes).toBeGreaterThan(0);
    },
  );

  it('gives the same discrete attributes in all three runs, and sizes within 1 %', () => {
    const [first, ...rest] = outcomes;
    const elements = first!.elements;
    for (const other of rest) {
      for (const name of Object.keys(elements) as Array<keyof typeof elements>) {
        const a = elements[name]!;
        const b = other.elements[name]!;
        for (const attribute of ['lineSize', 'fetchGranularity', 'fillGranularity', 'amount'] as const)
          expect(b[attribute]?.value, `${name}.${attribute}`).toBe(a[attribute]?.value);
        for (const attribute of ['size', 'segmentSize'] as const) {
          if (a[attribute])
            expect(Math.abs(b[attribute]!.value - a[attribute]!.value) / a[attribute]!.value, `${name}.${attribute}`).toBeLessThan(0.01);
        }
      }
    }
  });
});
