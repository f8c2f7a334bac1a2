import { describe, expect, it } from 'vitest';
import { discover, reanalyse } from '../../../server/discovery/index.js';
import { CONSTANT_STRATEGY } from '../../../server/discovery/strategies/constant.js';
import { L1_STRATEGY, READ_ONLY_STRATEGY, TEXTURE_STRATEGY } from '../../../server/discovery/strategies/l1.js';
import { ProbeSession } from '../../../server/discovery/probe-session.js';
import { SHARING_MEMBERS, SHARING_STRATEGY } from '../../../server/discovery/strategies/sharing.js';
import type { HelloResult, PchasePairArgs } from '../../../server/protocol/ops.js';
import { GPU_MODELS, ThreadedSimulatedChannel, type GpuModel } from '../../../server/gpu/sim/index.js';
import type { L1Space } from '../../../server/gpu/sim/model.js';
import type { ElementName, RawSeries } from '../../../server/model/document.js';

const H100 = GPU_MODELS['h100-sxm5-80gb']!;
const A100 = GPU_MODELS['a100-40gb']!;
/** A Kepler-like variant of the H100-like model: texture and read-only loads in a cache of their own beside the L1. */
const SPLIT_TEXTURE: GpuModel = {
  ...H100,
  id: 'h100-split-texture',
  l1: { ...H100.l1, physicalCacheOf: { 'global.ca': 0, readonly: 1, texture: 1 } },
};
/** A Kepler-like default too: plain global loads go to the L2 only (ld.global behaves as .cg). */
const L2_ONLY_DEFAULT: GpuModel = { ...H100, id: 'h100-l2-only-default', l1: { ...H100.l1, cachesDefaultGlobalLoads: false } };

const ELEMENTS = SHARING_MEMBERS.map((member) => member.element);
const PATH_OF: Partial<Record<ElementName, L1Space>> = { l1: 'global.ca', texture: 'texture', readOnly: 'readonly' };

/** The model's truth: the other L1 paths with the same physical cache id; the constant L1 shares with none. */
function truthSharedWith(model: GpuModel, element: ElementName): ElementName[] {
  const path = PATH_OF[element];
  if (!path) return [];
  return ELEMENTS.filter(
    (other) =>
      other !== element && PATH_OF[other] !== undefined && model.l1.physicalCacheOf[PATH_OF[other]!] === model.l1.physicalCacheOf[path],
  );
}

/** On a thread of its own: the test's thread (under coverage) only runs discovery. */
function channelOn(model: GpuModel, seed: number): ThreadedSimulatedChannel {
  const identity = { index: 0, uuid: `GPU-sim-${model.id}`, name: model.name, pciBusId: null };
  return new ThreadedSimulatedChannel({ model, seed, intensity: 0, identity });
}

/** The per-SM strategies, then the sharing strategy alone: its raw series and the simulated GPU time it took. */
async function measured(model: GpuModel, seed: number): Promise<{ raw: RawSeries[]; sharingSeconds: number }> {
  const channel = channelOn(model, seed);
  const session = new ProbeSession(channel, undefined, undefined);
  const hello = (await session.request('hello', 'hello', {})) as HelloResult;
  await session.request('calibrate', 'calibrate', { samples: 1024 });
  const device = hello.devices[0]!;
  for (const strategy of [L1_STRATEGY, TEXTURE_STRATEGY, READ_ONLY_STRATEGY, CONSTANT_STRATEGY]) await strategy.measure(session, device);
  const before = channel.simulatedDeviceSeconds();
  await SHARING_STRATEGY.measure(session, device);
  await channel.close();
  return { raw: session.raw, sharingSeconds: channel.simulatedDeviceSeconds() - before };
}

describe.each([
  [H100, 51],
  [A100, 52],
  [SPLIT_TEXTURE, 53],
  [L2_ONLY_DEFAULT, 54],
])('amount and physical sharing on the simulated $id', (model, seed) => {
  it('recovers every element’s sharedWith and one cache per SM exactly, in little GPU time, with the evidence in raw series', async () => {
    const { raw, sharingSeconds } = await measured(model, seed);
    expect(sharingSeconds).toBeLessThan(0.3);
    const outcome = reanalyse(raw);
    expect(outcome.warnings).toEqual([]);
    for (const element of ELEMENTS) {
      const e = outcome.elements[element];
      expect(e?.sharedWith, element).toEqual(truthSharedWith(model, element));
      expect(e?.amount, element).toMatchObject({ value: 1, unit: 'count', per: 'sm', source: 'microbenchmark' });
      expect(e?.amount?.confidence, element).toBeGreaterThan(0.7);
      // The size and latency the per-SM strategies built are kept beside them.
      expect(e?.size?.value, element).toBeGreaterThan(0);
    }
    // Whether the L1 caches a plain global load: the model's default, from one warm walk kept in raw series.
    expect(outcome.elements.l1?.cachesGlobalLoadsByDefault).toBe(model.l1.cachesDefaultGlobalLoads);
    expect(outcome.elements.texture?.cachesGlobalLoadsByDefault).toBeUndefined();
    expect(
      raw.filter((series) => series.name === 'sharing.defaultGlobal').map((series) => (series.args as { space: string }).space),
    ).toEqual(['global']);
    // Every ordered pair recorded once, under its own name, with its re-read and the other chaser's walk.
    const pairs = raw.filter(
      (series) =>
        series.name.startsWith('sharing.') && !series.name.startsWith('sharing.amount.') && series.name !== 'sharing.defaultGlobal',
    );
    const expectedNames = ELEMENTS.flatMap((a) => ELEMENTS.filter((b) => b !== a).map((b) => `sharing.${a}.${b}`));
    expect(pairs.map((series) => series.name).sort()).toEqual(expectedNames.sort());
    for (const series of pairs) {
      const args = series.args as PchasePairArgs;
      expect(args.placement).toBe('same-sm');
      expect((series.result as { firstLatenciesCycles: number[] }).firstLatenciesCycles).toHaveLength(args.samples);
    }
    // Thread 0 against 1, 2, 4, … 512 for each element: one cache, so no second round.
    for (const element of ELEMENTS) expect(raw.filter((series) => series.name === `sharing.amount.${element}`)).toHaveLength(10);
    expect(JSON.stringify(raw.filter((series) => series.name.startsWith('sharing.'))).length).toBeLessThan(150_000);
  }, 120_000);
});

describe('the sharing strategy in a discovery', () => {
  it('re-analyses its raw series (stored and read back) into the same elements', async () => {
    const outcome = await discover(channelOn(A100, 61), { only: ['l1', 'texture', 'readOnly', 'constantL1'] });
    expect(outcome.elements.l1?.sharedWith).toEqual(['texture', 'readOnly']);
    const stored = JSON.parse(JSON.stringify(outcome.raw)) as RawSeries[];
    expect(reanalyse(stored, ['l1', 'texture', 'readOnly', 'constantL1']).elements).toEqual(outcome.elements);
    expect(SHARING_STRATEGY.build(stored, outcome.device as never, null)).toEqual(
      SHARING_STRATEGY.build(outcome.raw, outcome.device as never, null),
    );
  }, 120_000);

  it('warns instead of reporting sharing when the two directions of a pair disagree', async () => {
    const { raw } = await measured(H100, 62);
    // Make l1's re-read after constant loads look evicted: its loads at the L2's latency.
    const tampered = raw.map((series) =>
      series.name === 'sharing.l1.constantL1'
        ? {
            ...series,
            result: {
              ...(series.result as object),
              firstLatenciesCycles: (series.result as { firstLatenciesCycles: number[] }).firstLatenciesCycles.map(() => 300),
            },
          }
        : series,
    );
    const outcome = reanalyse(tampered);
    expect(outcome.warnings).toEqual([
      expect.stringMatching(/^sharing: whether l1 and constantL1 share a cache is unclear \(the directions disagree/),
    ]);
    expect(outcome.elements.l1?.sharedWith).toEqual(['texture', 'readOnly']);
    expect(outcome.elements.constantL1?.sharedWith).toEqual([]);
  }, 120_000);

  it('measures nothing and builds nothing for elements without a measured size', async () => {
    const channel = channelOn(H100, 63);
    const session = new ProbeSession(channel, undefined, undefined);
    const hello = (await session.request('hello', 'hello', {})) as HelloResult;
    await SHARING_STRATEGY.measure(session, hello.devices[0]!);
    expect(session.raw.map((series) => series.name)).toEqual(['hello']);
    expect(SHARING_STRATEGY.build(session.raw, hello.devices[0]!, null)).toEqual({ elements: {}, warnings: [] });
  });
});
