import { describe, expect, it } from 'vitest';
import { discover, reanalyse } from '../../../server/discovery/index.js';
import { ProbeError } from '../../../server/gpu/backend.js';
import { GPU_MODELS, SimulatedBackend, type GpuModel } from '../../../server/gpu/sim/index.js';
import type { DiscoveryOutcome } from '../../../server/model/document.js';

/** The oracle is the model the sim runs: what discovery finds must be its ground truth. */
const TOLERANCE = 0.02;

async function discoverOn(model: GpuModel, seed: number, options: Parameters<typeof discover>[1] = {}): Promise<{ outcome: DiscoveryOutcome; ms: number }> {
  const backend = new SimulatedBackend({ models: [model.id], seed });
  const [gpu] = await backend.listDevices();
  const channel = await backend.open(gpu!);
  const started = performance.now();
  const outcome = await discover(channel, options);
  return { outcome, ms: performance.now() - started };
}

function expectNear(actual: number | undefined, truth: number, tolerance = TOLERANCE): void {
  expect(actual).toBeDefined();
  expect(Math.abs(actual! - truth) / truth).toBeLessThan(tolerance);
}

describe.each(Object.values(GPU_MODELS))('discovery on the simulated $id', (model) => {
  it('finds the L1, the L2 segments and the latencies of the model', async () => {
    const { outcome, ms } = await discoverOn(model, 11);
    const { l1, l2, deviceMemory } = outcome.elements;
    const overhead = model.clock.clockReadOverheadCycles;

    expectNear(l1?.size?.value, model.l1.sizeBytes);
    expect(l1?.size?.source).toBe('microbenchmark');
    expect(l1?.size?.confidence).toBeGreaterThan(0.5);
    expectNear(l1?.latency?.mean, model.l1.hitLatencyCycles['global.ca'], 0.03);
    expect(l1?.latency?.meanNs).toBeCloseTo((l1!.latency!.mean / model.clock.smClockHz) * 1e9, 0);

    expectNear(l2?.segmentSize?.value, model.l2.segment.sizeBytes);
    expect(l2?.amount).toMatchObject({ value: model.l2.segmentCount, per: 'gpu' });
    expect(l2?.size).toEqual({ value: model.device.l2CacheSizeBytes, unit: 'bytes', source: 'api' });
    const expectedL2 = model.l2.farHomedHitsCostFar
      ? (model.l2.nearHitLatencyCycles + model.l2.farHitLatencyCycles) / 2
      : model.l2.nearHitLatencyCycles;
    expectNear(l2?.latency?.mean, expectedL2, 0.05);
    expectNear(deviceMemory?.latency?.mean, model.deviceMemory.latencyCycles, 0.03);

    expect(outcome.clock?.clockReadOverheadCycles).toBe(overhead);
    expect(outcome.device).toMatchObject({ name: model.name, multiprocessorCount: model.device.multiprocessorCount });
    expect(outcome.warnings).toEqual([]);
    expect(ms).toBeLessThan(8000);
  });

  it('re-analyses its raw series into the same elements, and keeps them compact', async () => {
    const { outcome } = await discoverOn(model, 12);
    expect(reanalyse(outcome.raw).elements).toEqual(outcome.elements);
    expect(outcome.raw.map((series) => series.name)).toContain('l2.size.coarse');
    // Samples only, no index arrays: about 1.4 MB with every L1 size measured at two placements.
    expect(JSON.stringify(outcome.raw).length).toBeLessThan(1_600_000);
  });
});

describe('discovery options', () => {
  const h100 = GPU_MODELS['h100-sxm5-80gb']!;

  it('measures only what is asked for and reports progress up to 1', async () => {
    const phases: Array<[string, number]> = [];
    const { outcome } = await discoverOn(h100, 13, { only: ['l1'], onProgress: (phase, fraction) => phases.push([phase, fraction]) });
    expect(Object.keys(outcome.elements)).toEqual(['l1']);
    expect(outcome.raw.some((series) => series.name.startsWith('l2.'))).toBe(false);
    const fractions = phases.map(([, fraction]) => fraction);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    expect(phases.at(-1)).toEqual(['done', 1]);
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    await expect(discoverOn(h100, 14, { signal: controller.signal })).rejects.toMatchObject({ code: 'cancelled' });
  });

  it('gives different measurements with different seeds but the same answers', async () => {
    const [a, b] = await Promise.all([discoverOn(h100, 15, { only: ['l1'] }), discoverOn(h100, 16, { only: ['l1'] })]);
    expect(a.outcome.raw).not.toEqual(b.outcome.raw);
    expectNear(a.outcome.elements.l1?.size?.value, b.outcome.elements.l1!.size!.value, 0.01);
  });
});

describe('discovery when the probe refuses a benchmark', () => {
  it('skips the refused element with a warning and measures the rest', async () => {
    const model = GPU_MODELS['a100-40gb']!;
    const backend = new SimulatedBackend({ models: [model.id], seed: 17 });
    const [gpu] = await backend.listDevices();
    const sim = await backend.open(gpu!);
    const refusingBatch: typeof sim = {
      request: (op, args, options) => (op === 'pchase.batch' ? Promise.reject(new ProbeError('unsupported', 'no batch here')) : sim.request(op, args, options)),
      close: () => sim.close(),
    };
    const outcome = await discover(refusingBatch, {});
    expect(outcome.elements.l1).toBeUndefined();
    expect(outcome.elements.l2?.segmentSize).toBeDefined();
    expect(outcome.warnings.some((warning) => warning.startsWith('l1: skipped') && warning.includes('unsupported'))).toBe(true);
  });

  it('fails the discovery on a probe fault', async () => {
    const broken = { request: () => Promise.reject(new ProbeError('kernel_fault', 'illegal address')), close: async () => undefined };
    await expect(discover(broken, {})).rejects.toMatchObject({ code: 'kernel_fault' });
  });
});
