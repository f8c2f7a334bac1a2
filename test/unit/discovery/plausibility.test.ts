import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { reanalyse } from '../../../server/discovery/index.js';
import { plausibilityFindings, withPlausibility } from '../../../server/discovery/plausibility.js';
import { GPU_MODELS } from '../../../server/gpu/sim/index.js';
import type { DiscoveryOutcome, ElementTopology, MeasuredValue, RawSeries } from '../../../server/model/document.js';

const MIB = 1024 * 1024;
const H100 = GPU_MODELS['h100-sxm5-80gb']!;
/** The runtime's figures of an H100 (the simulator's hello): 50 MiB of L2, memory clock 2619 MHz × 5120 bits × 2 = 3.35 TB/s. */
const DEVICE = { ...H100.device, index: 0, uuid: 'GPU-test', name: H100.name, pciBusId: null };
const BUS_PEAK = 2_619_000e3 * (5120 / 8) * 2;

const measured = (value: number, confidence = 0.99, unit: MeasuredValue['unit'] = 'bytes'): MeasuredValue => ({
  value,
  unit,
  source: 'microbenchmark',
  confidence,
});
const latency = (mean: number, confidence = 0.99): NonNullable<ElementTopology['latency']> => ({
  unit: 'cycles',
  source: 'microbenchmark',
  mean,
  p50: mean,
  p95: mean,
  stdev: 1,
  sampleCount: 512,
  confidence,
});

/** A plausible idle H100 outcome (no check fires on it); each test breaks one thing. */
function idleOutcome(raw: RawSeries[] = []): DiscoveryOutcome {
  return {
    device: DEVICE,
    raw,
    warnings: [],
    elements: {
      l1: { size: measured(247_680), latency: latency(38), lineSize: measured(128), fetchGranularity: measured(32) },
      l2: {
        size: { value: 50 * MIB, unit: 'bytes', source: 'api' },
        segmentSize: measured(26_110_000),
        amount: { value: 2, unit: 'count', source: 'derived', per: 'gpu', confidence: 0.98 },
        latency: latency(281),
        lineSize: measured(128, 1),
        fetchGranularity: measured(32),
        fillGranularity: measured(64),
        readBandwidth: measured(5.0e12, 0.96, 'bytes/s'),
        writeBandwidth: measured(3.9e12, 0.97, 'bytes/s'),
      },
      deviceMemory: {
        size: { value: DEVICE.totalMemoryBytes, unit: 'bytes', source: 'api' },
        latency: latency(654),
        readBandwidth: measured(3.0e12, 0.98, 'bytes/s'),
        writeBandwidth: measured(3.1e12, 0.95, 'bytes/s'),
      },
    },
  };
}

function chase(name: string, arrayBytes: number, latenciesCycles: number[], strideBytes = 128): RawSeries {
  return {
    name,
    op: 'pchase',
    args: { space: 'global.cg', arrayBytes, strideBytes, pattern: 'sequential', warmup: true, samples: latenciesCycles.length, smId: 0 },
    result: { smId: 0, latenciesCycles },
  };
}

function warningsOf(outcome: DiscoveryOutcome): string[] {
  return withPlausibility(outcome).warnings;
}

describe('plausibility checks', () => {
  it('find nothing in a plausible outcome, and hand it back as it was', () => {
    const outcome = idleOutcome([
      chase('l2.size.coarse', 8 * MIB, [280, 290, 700, 2000]),
      chase('l2.line', 27.7 * MIB, [700]),
      chase('l2.line', 29.4 * MIB, [700]),
    ]);
    expect(plausibilityFindings(outcome)).toEqual([]);
    expect(withPlausibility(outcome)).toBe(outcome);
  });

  it("l2-total-vs-api: a segment size that the partitions do not multiply to the runtime's L2 loses its confidence, and a count read off it too", () => {
    const outcome = idleOutcome();
    outcome.elements.l2!.segmentSize = measured(40_470_144, 0.95);
    const before = structuredClone(outcome);
    const checked = withPlausibility(outcome);
    expect(checked.elements.l2!.segmentSize).toMatchObject({ value: 40_470_144, confidence: 0.5 });
    expect(checked.elements.l2!.amount!.confidence).toBe(0.5);
    expect(checked.warnings).toEqual([
      expect.stringMatching(
        /^l2\.segmentSize, l2\.amount: confidence at most 0\.5 \(plausibility check l2-total-vs-api: 2 × 40470144 bytes is 1\.54× the 52428800 bytes/,
      ),
    ]);
    expect(outcome).toEqual(before);
  });

  it('l2-total-vs-api: a partition count measured on its own series keeps its confidence', () => {
    const outcome = idleOutcome();
    outcome.elements.l2!.segmentSize = measured(22_000_000);
    outcome.elements.l2!.amount = { value: 2, unit: 'count', source: 'microbenchmark', per: 'gpu', confidence: 1 };
    const checked = withPlausibility(outcome);
    expect(checked.elements.l2!.segmentSize!.confidence).toBe(0.5);
    expect(checked.elements.l2!.amount!.confidence).toBe(1);
  });

  it('line-power-of-two and line-holds-fetches: a line of 96 B, or one smaller than its fetches, is not sure', () => {
    const odd = idleOutcome();
    odd.elements.l1!.lineSize = measured(96);
    expect(withPlausibility(odd).elements.l1!.lineSize!.confidence).toBe(0.5);
    expect(warningsOf(odd)).toEqual([expect.stringContaining('plausibility check line-power-of-two')]);

    const small = idleOutcome();
    small.elements.l1!.lineSize = measured(16);
    const checked = withPlausibility(small);
    expect(checked.elements.l1!.lineSize!.confidence).toBe(0.5);
    expect(checked.elements.l1!.fetchGranularity!.confidence).toBe(0.5);
    expect(checked.warnings).toEqual([expect.stringContaining('plausibility check line-holds-fetches')]);
  });

  it('fill-within-line: device memory fills more than a line', () => {
    const outcome = idleOutcome();
    outcome.elements.l2!.fillGranularity = measured(256);
    expect(withPlausibility(outcome).elements.l2!.fillGranularity!.confidence).toBe(0.5);
  });

  it("l2-line-walk-arrays: the busy H100's 256 B line, read over arrays sized from a wrong segment, is not sure", () => {
    const outcome = idleOutcome([chase('l2.line', 43_000_000, [700]), chase('l2.line', 45_500_000, [700])]);
    outcome.elements.l2!.lineSize = measured(256, 1);
    const checked = withPlausibility(outcome);
    expect(checked.elements.l2!.lineSize).toMatchObject({ value: 256, confidence: 0.5 });
    expect(checked.warnings).toEqual([
      expect.stringMatching(/plausibility check l2-line-walk-arrays: the line-size walks' arrays are 1\.64–1\.74× one partition's/),
    ]);
  });

  it('bandwidth-vs-bus: device memory faster than memory clock × bus width × 2', () => {
    const outcome = idleOutcome();
    outcome.elements.deviceMemory!.readBandwidth = measured(BUS_PEAK * 1.1, 0.97, 'bytes/s');
    outcome.elements.l2!.readBandwidth = measured(BUS_PEAK * 1.5, 0.96, 'bytes/s');
    const checked = withPlausibility(outcome);
    expect(checked.elements.deviceMemory!.readBandwidth!.confidence).toBe(0.5);
    expect(checked.elements.deviceMemory!.writeBandwidth!.confidence).toBe(0.95);
    expect(checked.warnings).toEqual([expect.stringContaining('plausibility check bandwidth-vs-bus')]);
  });

  it('bandwidth-order and latency-order: the L2 slower than device memory behind it', () => {
    const outcome = idleOutcome();
    outcome.elements.l2!.writeBandwidth = measured(2.0e12, 0.97, 'bytes/s');
    outcome.elements.l2!.latency = latency(700);
    const checked = withPlausibility(outcome);
    expect(checked.elements.l2!.writeBandwidth!.confidence).toBe(0.5);
    expect(checked.elements.deviceMemory!.writeBandwidth!.confidence).toBe(0.5);
    expect(checked.elements.l2!.latency!.confidence).toBe(0.5);
    expect(checked.elements.deviceMemory!.latency!.confidence).toBe(0.5);
    expect(checked.warnings.map((warning) => /plausibility check ([a-z-]+)/.exec(warning)![1])).toEqual([
      'bandwidth-order',
      'latency-order',
    ]);
  });

  it('size-order: an L1 as large as the L2 partition it misses to', () => {
    const outcome = idleOutcome();
    outcome.elements.l1!.size = measured(30 * MIB, 0.93);
    expect(withPlausibility(outcome).elements.l1!.size!.confidence).toBe(0.5);
  });

  it("stalled-loads: a load far past device memory means another tenant ran: every measured value is capped, the runtime's figures stay", () => {
    const outcome = idleOutcome([
      chase('l2.size.coarse', 8 * MIB, [280, 290, 1_000_000, 300]),
      chase('l1.size.coarse', 128 * 1024, [38, 38, 40]),
    ]);
    const checked = withPlausibility(outcome);
    for (const attribute of ['segmentSize', 'latency', 'lineSize', 'fetchGranularity', 'fillGranularity', 'readBandwidth'] as const)
      expect(checked.elements.l2![attribute]!.confidence).toBe(0.8);
    expect(checked.elements.deviceMemory!.latency!.confidence).toBe(0.8);
    expect(checked.elements.l1!.size!.confidence).toBe(0.8);
    expect(checked.elements.l2!.size).toEqual(outcome.elements.l2!.size);
    expect(checked.warnings).toEqual([
      expect.stringContaining('plausibility check stalled-loads: 1 of 7 timed loads (l2: 1) took over 6540 cycles'),
    ]);
  });

  it('stalled-loads: without a device-memory latency, only loads of tens of microseconds count', () => {
    const outcome = idleOutcome([chase('l1.size.coarse', 128 * 1024, [38, 2_000, 40_000])]);
    delete outcome.elements.deviceMemory;
    expect(plausibilityFindings(outcome)).toEqual([]);
    outcome.raw.push(chase('l1.size.coarse', 128 * 1024, [38, 900_000]));
    expect(plausibilityFindings(outcome).map((finding) => finding.check)).toEqual(['stalled-loads']);
  });

  it('never raise a confidence: a value already below the cap keeps its own', () => {
    const outcome = idleOutcome();
    outcome.elements.l2!.segmentSize = measured(40_000_000, 0.3);
    outcome.elements.l2!.amount = { value: 1, unit: 'count', source: 'derived', per: 'gpu', confidence: 0.2 };
    const checked = withPlausibility(outcome);
    expect(checked.elements.l2!.segmentSize!.confidence).toBe(0.3);
    expect(checked.elements.l2!.amount!.confidence).toBe(0.2);
    expect(checked.warnings).toEqual([]);
  });
});

describe('plausibility checks on idle H100 runs (recorded)', () => {
  const fixtures = ['discovery-3-runs', 'discovery-ii-3-runs', 'sharing-farnear-3-runs'];
  const runs = fixtures.flatMap((name) => {
    const recorded = JSON.parse(
      gunzipSync(readFileSync(new URL(`../../fixtures/h100/${name}.json.gz`, import.meta.url))).toString('utf8'),
    ) as { runs: Array<{ run: number; raw: RawSeries[] }> };
    return recorded.runs.map(({ run, raw }) => [`${name} run ${run}`, raw] as const);
  });

  it.each(runs)(
    '%s: no check fires',
    (_label, raw) => {
      expect(plausibilityFindings(reanalyse(raw))).toEqual([]);
    },
    30_000,
  );
});
