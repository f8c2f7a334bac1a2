/**
 * The traffic analysis on a real H100's sweep (test/fixtures/h100/traffic-sweep.json.gz,
 * recorded by scripts/device/traffic-suite.sh): physics the numbers must obey,
 * whatever they are, and the predictor against the counters. Nothing is
 * pinned to a measured figure.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { reanalyse } from '../../../server/discovery/index.js';
import { buildTraffic } from '../../../server/discovery/strategies/traffic.js';
import { countedPoints, type TrafficPoint } from '../../../server/discovery/strategies/traffic-analysis.js';
import {
  accuracyPercent,
  curveCorrections,
  parametersFromDocument,
  predictTraffic,
  predictWithCurve,
} from '../../../server/discovery/traffic-predict.js';
import type { TrafficArgs, TrafficResult } from '../../../server/protocol/ops.js';
import type { RawSeries } from '../../../server/model/document.js';

interface StandaloneCase {
  kind: string;
  strideElements: number;
  fresh: boolean;
  accesses: number;
  ranges: Array<Record<string, number | string>>;
}
interface Fixture {
  raw: RawSeries[];
  standalone: Record<string, [Record<string, unknown>, ...StandaloneCase[]]>;
}

const fixture = JSON.parse(gunzipSync(readFileSync('test/fixtures/h100/traffic-sweep.json.gz')).toString('utf8')) as Fixture;
const { traffic, parameters } = buildTraffic(fixture.raw);
const counted: TrafficPoint[] = fixture.raw
  .filter((s) => s.op === 'traffic' && s.name.startsWith('traffic.counters.'))
  .flatMap((s) => countedPoints(s.result as TrafficResult, (s.args as TrafficArgs).l2FetchGranularityBytes ?? null));
const isPowerOfTwo = (x: number) => Number.isInteger(Math.log2(x));
const perAccess = (p: TrafficPoint, bytes: number | null) => (bytes ?? 0) / p.accesses;
const defaults = counted.filter((p) => p.fetchLimitBytes === null && p.elementBytes === 4);

describe('traffic on a recorded H100', () => {
  it('counted every case, with hardware counters', () => {
    expect(traffic?.method).toBe('counters');
    expect(traffic?.countersUnavailable).toBeNull();
    expect(counted.length).toBeGreaterThan(200);
  });

  it('transactions are powers of two; an isolated read moves at least one read transaction, a fill a whole number of them', () => {
    const read = traffic!.readTransactionBytes!.value;
    const write = traffic!.writeTransactionBytes!.value;
    const fill = traffic!.readFillBytes!.value;
    expect(isPowerOfTwo(read) && isPowerOfTwo(write)).toBe(true);
    expect(fill).toBeGreaterThanOrEqual(read * 0.98);
    expect(Math.abs(fill / read - Math.round(fill / read))).toBeLessThan(0.05);
    expect(traffic!.prefetchFactor!.value).toBeCloseTo(fill / read, 1);
  });

  it('a stride-1 pass moves each array once: reads and writes within 2 % of the footprint', () => {
    for (const p of defaults.filter((x) => x.strideBytes === x.elementBytes)) {
      const arraysRead = { read: 1, write: 0, rmw: 1, vecmul: 2 }[p.pattern];
      const arraysWritten = p.pattern === 'read' ? 0 : 1;
      expect(p.readBytes! / p.footprintBytes, `${p.pattern} reads`).toBeCloseTo(arraysRead, 1);
      expect(Math.abs(p.writeBytes! - arraysWritten * p.footprintBytes), `${p.pattern} writes`).toBeLessThan(
        0.02 * p.footprintBytes + 2 ** 20,
      );
    }
  });

  it('reads per access never shrink as the stride grows, and a pass never moves more than the span', () => {
    for (const footprint of new Set(defaults.map((p) => p.footprintBytes))) {
      const reads = defaults
        .filter((p) => p.pattern === 'read' && p.footprintBytes === footprint)
        .sort((a, b) => a.strideBytes - b.strideBytes);
      for (let i = 1; i < reads.length; i += 1)
        expect(perAccess(reads[i]!, reads[i]!.readBytes)).toBeGreaterThanOrEqual(0.98 * perAccess(reads[i - 1]!, reads[i - 1]!.readBytes));
      for (const p of reads) expect(p.readBytes!).toBeLessThanOrEqual(1.02 * p.footprintBytes);
    }
  });

  it('a smaller L2 fetch limit never reads more; the smallest reads one transaction per isolated access', () => {
    const isolated = counted.filter((p) => p.pattern === 'read' && p.strideBytes >= 256 && p.elementBytes === 4);
    const limits = [...new Set(isolated.map((p) => p.fetchLimitBytes).filter((x): x is number => x !== null))].sort((a, b) => a - b);
    expect(limits.length).toBeGreaterThan(0);
    const at = (limit: number) => isolated.filter((p) => p.fetchLimitBytes === limit).map((p) => perAccess(p, p.readBytes));
    for (let i = 1; i < limits.length; i += 1)
      expect(Math.min(...at(limits[i]!))).toBeGreaterThanOrEqual(0.98 * Math.max(...at(limits[i - 1]!)));
    for (const bytes of at(limits[0]!)) expect(bytes).toBeCloseTo(traffic!.readTransactionBytes!.value, -0.5);
  });

  it('each store flag says what its points show: a dense partial-sector store reads its span, or nothing', () => {
    for (const target of ['fresh', 'written'] as const) {
      const flag = traffic!.storesAllocate[target]!;
      for (const p of defaults.filter((x) => x.pattern === 'write' && x.target === target && x.strideBytes === 2 * x.elementBytes)) {
        const share = p.readBytes! / p.footprintBytes;
        expect(flag.value ? share > 0.9 : share < 0.1, `${target} ${p.footprintBytes}`).toBe(true);
      }
    }
    const whole = defaults.filter((p) => p.pattern === 'write' && p.strideBytes === p.elementBytes);
    for (const p of whole) expect(p.readBytes! / p.footprintBytes > 0.5).toBe(traffic!.fullSectorStoresRead!.value);
  });

  it('the line-size model is left where isolated reads move more than one transaction', () => {
    const departs = traffic!.departsFromLineModelAtStrideBytes;
    expect(departs).not.toBeNull();
    const fill = traffic!.readFillBytes!.value;
    // Below one fill the accesses still cover the whole span; from one fill on, each access moves a fill.
    expect(departs!).toBeGreaterThan(traffic!.readTransactionBytes!.value);
    expect(departs!).toBeLessThanOrEqual(2 * fill);
  });

  it('predicts the paper’s vecMul sweep (strides 1–1024, both footprints) within the issue’s 95 %', () => {
    expect(parameters).not.toBeNull();
    for (const p of defaults.filter((x) => x.pattern === 'vecmul')) {
      const r = predictTraffic(parameters!, {
        pattern: 'vecmul',
        strideBytes: p.strideBytes,
        elementBytes: 4,
        footprintBytes: p.footprintBytes,
        target: p.target,
      });
      expect(
        accuracyPercent(p.totalBytes, r.readBytes + r.writeBytes),
        `stride ${p.strideBytes / 4}, ${p.footprintBytes} B`,
      ).toBeGreaterThanOrEqual(95);
    }
  });

  it('with the served curve, the read-modify-write the model misses (more than one fill per access at middle strides) is predicted where it was measured', () => {
    const served = parametersFromDocument(traffic!)!;
    const largest = Math.max(...defaults.map((p) => p.footprintBytes));
    // The curve a discovery records: one footprint (this fixture's sweep has two).
    const corrections = curveCorrections(
      served,
      traffic!.curve.filter((p) => p.accesses * p.strideBytes > 0.9 * largest),
    );
    for (const p of defaults.filter((x) => x.pattern === 'rmw' && x.footprintBytes === largest)) {
      const q = {
        pattern: 'rmw' as const,
        strideBytes: p.strideBytes,
        elementBytes: 4,
        footprintBytes: p.footprintBytes,
        target: p.target,
      };
      const withCurve = predictWithCurve(served, corrections, q);
      expect(accuracyPercent(p.totalBytes, withCurve.readBytes + withCurve.writeBytes), `stride ${p.strideBytes / 4}`).toBeGreaterThan(98);
      const model = predictTraffic(served, q);
      expect(model.readBytes + model.writeBytes).toBeLessThanOrEqual(1.02 * p.totalBytes);
    }
  });

  it('the served document carries the same parameters, and re-analysis rebuilds the same section', () => {
    const served = parametersFromDocument(traffic!)!;
    expect(served.readTransactionBytes).toBe(parameters!.readTransactionBytes);
    expect(served.writeTransactionBytes).toBe(parameters!.writeTransactionBytes);
    expect(served.readFillBytes).toBeCloseTo(parameters!.readFillBytes, 0);
    expect(served.storesAllocate).toEqual(parameters!.storesAllocate);
    expect(reanalyse(fixture.raw, ['traffic']).traffic).toEqual(traffic);
  });

  it('agrees with the standalone CUPTI check (CUPTI linked directly) on every vecMul stride, per access, within 5 %', () => {
    const standalone = fixture.standalone['763']!.slice(1) as StandaloneCase[];
    const probe = defaults.filter((p) => p.pattern === 'vecmul' && p.footprintBytes === Math.max(...defaults.map((x) => x.footprintBytes)));
    let compared = 0;
    for (const s of standalone.filter((x) => x.kind === 'vecmul')) {
      const mine = probe.find((p) => p.strideBytes === 4 * s.strideElements && p.target === (s.fresh ? 'fresh' : 'written'));
      if (!mine) continue;
      const [, during, after] = s.ranges as Array<Record<string, number>>;
      const flush = fixture.standalone['763']![0]!['l2Bytes'] as number;
      const theirs =
        during!['dram__bytes_read.sum']! +
        Math.max(0, after!['dram__bytes_read.sum']! - 4 * flush) +
        during!['dram__bytes_write.sum']! +
        after!['dram__bytes_write.sum']!;
      expect(
        Math.abs(theirs / s.accesses - mine.totalBytes / mine.accesses) / (mine.totalBytes / mine.accesses),
        `stride ${s.strideElements}`,
      ).toBeLessThan(0.05);
      compared += 1;
    }
    expect(compared).toBeGreaterThan(10);
  });
});
