import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ProbeRequestBodySchema } from '../../../server/api/probe-request.js';
import { discover, reanalyse } from '../../../server/discovery/index.js';
import {
  MEASURABLE_ELEMENTS,
  PROBE_TARGETS,
  STRATEGIES,
  carryOverRaw,
  strategiesFor,
  strategyOwning,
  strategiesToBuild,
  type Strategy,
} from '../../../server/discovery/registry.js';
import type { ProbeChannel } from '../../../server/gpu/backend.js';
import { ProbeError } from '../../../server/protocol/probe-error.js';
import type { HelloResult } from '../../../server/protocol/ops.js';
import { SimulatedBackend } from '../../../server/gpu/sim/index.js';
import { ELEMENT_NAMES, type DiscoveryOutcome, type RawSeries } from '../../../server/model/document.js';
import {
  SHARED_H100_SEED,
  simulatedDiscovery,
  WHOLE_DISCOVERY_TIMEOUT_MS,
  type SimulatedDiscoveryRequest,
} from '../../helpers/simulated-discovery.js';

const H100 = 'h100-sxm5-80gb';
/**
 * The H100 with an 8 MiB L2 (server/gpu/sim/models/h100-l2-8mib.ts), for the discoveries this file runs alone:
 * they test which strategies run, not what they measure, at a third of the H100's cost.
 */
const STAND_IN = 'h100-l2-8mib';
/** An element of the document no strategy measures yet (texture, today). */
const UNMEASURED = ELEMENT_NAMES.find((element) => !MEASURABLE_ELEMENTS.includes(element))!;
/** Discoveries run once per test run and shared (test/helpers/simulated-discovery.ts). */
const FULL: SimulatedDiscoveryRequest = { model: H100, seed: SHARED_H100_SEED };
const L1_ONLY: SimulatedDiscoveryRequest = { model: H100, seed: 32, only: ['l1'] };
/** A probe whose hello does not list pchase.batch: the per-SM strategies are skipped. */
const WITHOUT_BATCH: SimulatedDiscoveryRequest = { model: STAND_IN, seed: 33, hiddenOps: ['pchase.batch'] };

async function simChannel(seed: number): Promise<ProbeChannel> {
  const backend = new SimulatedBackend({ models: [STAND_IN], seed, thread: true });
  const [gpu] = await backend.listDevices();
  return backend.open(gpu!);
}

/** The sim, with its hello rewritten (an older probe). */
function rewritingHello(channel: ProbeChannel, rewrite: (hello: HelloResult) => HelloResult): ProbeChannel {
  return {
    request: async (op, args, options) => {
      const result = await channel.request(op, args, options);
      return (op === 'hello' ? rewrite(result as HelloResult) : result) as never;
    },
    close: () => channel.close(),
  };
}

function elementNames(outcome: DiscoveryOutcome): string[] {
  return Object.keys(outcome.elements);
}

/** The elements some of `strategies` measure, each once, in registry order (strategies may share an element). */
function elementsOf(strategies: readonly Strategy[]): string[] {
  return [...new Set(strategies.flatMap((strategy) => strategy.elements))];
}

describe('the strategy registry', () => {
  it('measures every element the probe API accepts in `only`, and the API accepts exactly those and the opt-in families', () => {
    const accepted = (ProbeRequestBodySchema.properties.only as unknown as { items: { enum: string[] } }).items.enum;
    expect(accepted).toEqual([...MEASURABLE_ELEMENTS, 'traffic']);
    expect(accepted).toEqual([...PROBE_TARGETS]);
    for (const element of accepted) expect(strategiesFor([element as never]).length, element).toBeGreaterThan(0);
  });

  it('lists the union of the strategies’ elements once each, in document order', () => {
    const union = new Set(STRATEGIES.flatMap((strategy) => strategy.elements));
    expect(new Set(MEASURABLE_ELEMENTS)).toEqual(union);
    expect(MEASURABLE_ELEMENTS).toHaveLength(union.size);
    expect([...MEASURABLE_ELEMENTS]).toEqual(ELEMENT_NAMES.filter((element) => union.has(element)));
  });

  it('gives every strategy a unique name, ops, a positive weight, and each element a first strategy that builds it', () => {
    expect(new Set(STRATEGIES.map((strategy) => strategy.name)).size).toBe(STRATEGIES.length);
    for (const element of MEASURABLE_ELEMENTS) {
      // The first strategy of an element builds it and is a required one; later ones add their own attributes (reanalyse merges them).
      expect(STRATEGIES.find((strategy) => strategy.elements.includes(element))?.optional, element).not.toBe(true);
    }
    const l2Owners = STRATEGIES.filter((strategy) => strategy.elements.includes('l2')).map((s) => s.name);
    expect(l2Owners[0]).toBe('l2');
    expect(l2Owners).toContain('bandwidth');
    for (const strategy of STRATEGIES) {
      expect(strategy.progressWeight, strategy.name).toBeGreaterThan(0);
      expect(strategy.requiredOps.length, strategy.name).toBeGreaterThan(0);
    }
  });

  it('selects strategies by element, in registry order', () => {
    // A full probe runs every strategy but the opt-in ones (traffic: only when `only` names it); an analysis builds from all.
    expect(strategiesFor(null)).toEqual(STRATEGIES.filter((s) => s.name !== 'traffic'));
    expect(strategiesToBuild(null)).toEqual([...STRATEGIES]);
    expect(strategiesFor(['traffic']).map((s) => s.name)).toEqual(['traffic']);
    expect(strategiesFor(['deviceMemory']).map((s) => s.name)).toEqual(['l2', 'bandwidth']);
    expect(strategiesFor(['deviceMemory', 'l1']).map((s) => s.name)).toEqual(['l1', 'sharing', 'l2', 'bandwidth']);
    expect(strategiesFor([UNMEASURED])).toEqual([]);
  });

  it('assigns each recorded series of a real H100 probe to one strategy, session series to none', () => {
    const recorded = JSON.parse(readFileSync('test/fixtures/h100/discovery-run.json', 'utf8')) as { raw: RawSeries[] };
    for (const series of recorded.raw) {
      const owners = STRATEGIES.filter((strategy) => strategy.ownsSeries(series.name));
      if (series.op === 'hello' || series.op === 'calibrate') expect(owners, series.name).toEqual([]);
      else
        expect(
          owners.map((s) => s.name),
          series.name,
        ).toEqual([series.name.split('.')[0]]);
    }
    expect(strategyOwning('l1size.coarse')).toBeUndefined();
    expect(strategyOwning('constantly')).toBeUndefined();
  });
});

describe('carryOverRaw', () => {
  const series = (name: string, op = 'pchase'): RawSeries => ({ name, op, args: {}, result: { name } });
  const previous = [
    series('hello', 'hello'),
    series('calibrate', 'calibrate'),
    series('l1.size.coarse', 'pchase.batch'),
    series('l2.size.coarse'),
    series('l2.size.refine.1'),
  ];
  const fresh = [
    series('hello', 'hello'),
    series('calibrate', 'calibrate'),
    series('l1.size.coarse', 'pchase.batch'),
    series('l1.size.refine.1', 'pchase.batch'),
  ];

  it('keeps the fresh series and adds the previous ones of strategies not re-measured, session series from the fresh run', () => {
    const carried = carryOverRaw(previous, fresh, ['l1']);
    expect(carried).toEqual([...fresh, previous[3], previous[4]]);
    expect(carried.filter((s) => s.op === 'hello')).toEqual([fresh[0]]);
  });

  it('carries nothing a re-measured strategy owns, whichever of its elements was asked for', () => {
    const l2Fresh = [series('hello', 'hello'), series('l2.size.coarse')];
    expect(carryOverRaw(previous, l2Fresh, ['deviceMemory'])).toEqual([...l2Fresh, previous[2]]);
  });

  it('returns the fresh series for a full probe, with the previous series of opt-in strategies (a full probe does not run them)', () => {
    expect(carryOverRaw(previous, fresh, null)).toEqual(fresh);
    const traffic = series('traffic.counters.read', 'traffic');
    expect(carryOverRaw([...previous, traffic], fresh, null)).toEqual([...fresh, traffic]);
    expect(carryOverRaw([...previous, traffic], fresh, ['l1'])).toContain(traffic);
    expect(carryOverRaw([...previous, traffic], [...fresh, { ...traffic, result: {} }], ['traffic'])).not.toContain(traffic);
  });

  it(
    'lets a partial probe’s result be rebuilt from its own raw data',
    async () => {
      const { outcome: full } = await simulatedDiscovery(FULL);
      const { outcome: partial } = await simulatedDiscovery(L1_ONLY);
      const raw = carryOverRaw(full.raw, partial.raw, ['l1']);
      const rebuilt = reanalyse(raw);
      expect(rebuilt.clock).toEqual(partial.clock);
      // The partial run alone had no L2 to derive the L1's miss penalty from; the rebuilt result has the carried one.
      const { missPenalty, sharedWith: carriedSharing, ...l1 } = rebuilt.elements.l1!;
      const { sharedWith: partialSharing, ...partialL1 } = partial.elements.l1!;
      expect(partialSharing).toBeUndefined(); // the partial run alone paired the L1 with nothing
      expect(l1).toEqual(partialL1);
      expect(missPenalty?.value).toBeCloseTo(rebuilt.elements.l2!.latency!.mean - l1.latency!.mean, 1);
      expect(Object.keys(rebuilt.elements).sort()).toEqual(Object.keys(full.elements).sort());
      // The sharing strategy re-ran with the L1 but could pair it with nothing this probe sized: the pairs it did not
      // measure again are carried from the full run, so every element keeps its amount and sharedWith.
      expect(partial.elements.texture).toBeUndefined();
      expect(partial.raw.some((s) => s.name.startsWith('sharing.texture.'))).toBe(false);
      expect(raw.some((s) => s.name.startsWith('sharing.texture.'))).toBe(true);
      for (const name of ['texture', 'readOnly', 'constantL1'] as const) {
        expect(rebuilt.elements[name]?.sharedWith, name).toEqual(full.elements[name]?.sharedWith);
        expect(rebuilt.elements[name]?.amount, name).toEqual(full.elements[name]?.amount);
      }
      expect(carriedSharing).toEqual(full.elements.l1?.sharedWith);
      const withoutSharing = (elements: DiscoveryOutcome['elements']) =>
        Object.fromEntries(
          Object.entries(elements).map(([name, element]) => [
            name,
            name === 'l1' ? element : { ...element, amount: undefined, sharedWith: undefined },
          ]),
        );
      // The carried L2 series are read with the fresh run's clock: the same cycles, nanoseconds at the new clock.
      const cyclesOnly = (elements: DiscoveryOutcome['elements']) =>
        JSON.parse(JSON.stringify(elements, (key, value: unknown) => (key === 'meanNs' ? undefined : value))) as unknown;
      expect(cyclesOnly(withoutSharing({ ...rebuilt.elements, l1 }))).toEqual(
        cyclesOnly(withoutSharing({ ...full.elements, l1: partialL1 })),
      );
      const hz = rebuilt.clock!.smClockHz!;
      expect(rebuilt.elements.l2!.latency!.meanNs).toBeCloseTo((rebuilt.elements.l2!.latency!.mean / hz) * 1e9, 1);
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );
});

describe('discovery from the registry', () => {
  it(
    'skips a strategy whose ops the probe does not list, naming them, and never sends them',
    async () => {
      const { outcome, sentOps } = await simulatedDiscovery(WITHOUT_BATCH);
      expect(sentOps).not.toContain('pchase.batch');
      const [skipped, measured] = [
        STRATEGIES.filter((s) => s.requiredOps.includes('pchase.batch')),
        STRATEGIES.filter((s) => !s.requiredOps.includes('pchase.batch')),
      ];
      expect(skipped.map((s) => s.name)).toContain('l1');
      expect(elementNames(outcome)).toEqual(elementsOf(measured));
      expect(outcome.warnings).toEqual(
        skipped.map((s) => expect.stringMatching(new RegExp(`^${s.name}: skipped, the probe does not support pchase\\.batch`))),
      );
      expect(outcome.raw.some((series) => skipped.some((s) => s.ownsSeries(series.name)))).toBe(false);
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );

  it('treats a hello without an ops list (an older probe) as supporting every op', async () => {
    const channel = rewritingHello(await simChannel(34), ({ ops: _ops, ...hello }) => hello as HelloResult);
    const outcome = await discover(channel, { only: ['l1'] });
    expect(elementNames(outcome)).toEqual(['l1']);
    expect(outcome.warnings).toEqual([]);
  });

  it(
    'reports monotonic progress that reaches 1, also with a strategy skipped',
    async () => {
      for (const request of [FULL, WITHOUT_BATCH]) {
        const { progress: steps } = await simulatedDiscovery(request);
        const fractions = steps.map(([, fraction]) => fraction);
        for (let i = 1; i < fractions.length; i += 1) expect(fractions[i]).toBeGreaterThanOrEqual(fractions[i - 1]!);
        expect(fractions.every((f) => f >= 0 && f <= 1)).toBe(true);
        expect(steps.at(-1)).toEqual(['done', 1]);
        expect(steps.map(([phase]) => phase)).toEqual(expect.arrayContaining(['hello', 'analysis']));
      }
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );

  it('warns about an element in `only` that no strategy measures and measures the rest', async () => {
    const outcome = await discover(await simChannel(37), { only: [UNMEASURED, 'l1'] });
    expect(elementNames(outcome)).toEqual(['l1']);
    expect(outcome.warnings).toEqual([`${UNMEASURED}: not measured, no strategy measures it (measurable: ${PROBE_TARGETS.join(', ')})`]);
  });

  it('drops the series of a benchmark the probe refused part-way, so no element is built from half a sweep', async () => {
    const sim = await simChannel(38);
    let batches = 0;
    const refusingLater: ProbeChannel = {
      request: (op, args, options) =>
        op === 'pchase.batch' && ++batches > 2
          ? Promise.reject(new ProbeError('out_of_memory', 'no room'))
          : sim.request(op, args, options),
      close: () => sim.close(),
    };
    const outcome = await discover(refusingLater, { only: ['l1'] });
    expect(batches).toBeGreaterThan(2);
    expect(outcome.elements).toEqual({});
    expect(outcome.raw.some((s) => s.name.startsWith('l1.'))).toBe(false);
    expect(outcome.warnings).toEqual([expect.stringMatching(/^l1: skipped, the probe answered out_of_memory/)]);
  });

  it(
    're-analyses only the strategies whose series are present, and only the elements asked for',
    async () => {
      const { outcome: l1Only } = await simulatedDiscovery(L1_ONLY);
      expect(elementNames(reanalyse(l1Only.raw))).toEqual(['l1']);
      expect(reanalyse(l1Only.raw).warnings).toEqual([]);
      const { outcome: full } = await simulatedDiscovery(FULL);
      expect(reanalyse(full.raw, ['deviceMemory']).elements).toEqual({ deviceMemory: full.elements.deviceMemory });
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );
});

describe('optional strategies', () => {
  /** A channel whose probe faults on one op (as a kernel fault ends a native probe) and answers every later request closed. */
  function faultingOn(channel: ProbeChannel, op: string): ProbeChannel {
    let dead = false;
    return {
      request: (requested, args, options) => {
        if (dead) return Promise.reject(new ProbeError('closed', 'the probe exited'));
        if (requested === op) {
          dead = true;
          return Promise.reject(new ProbeError('kernel_fault', 'an illegal memory access was encountered'));
        }
        return channel.request(requested, args, options);
      },
      close: () => channel.close(),
    };
  }

  it('run after every required strategy, since a fault in one may leave the probe gone', () => {
    const firstOptional = STRATEGIES.findIndex((strategy) => strategy.optional === true);
    expect(firstOptional).toBeGreaterThan(0);
    expect(STRATEGIES.slice(firstOptional).every((strategy) => strategy.optional === true)).toBe(true);
  });

  it(
    'cost only themselves when the probe faults inside them: the memory elements are kept, with a warning',
    async () => {
      const optional = STRATEGIES.find((strategy) => strategy.optional === true)!;
      const outcome = await discover(faultingOn(await simChannel(35), optional.requiredOps.at(-1)!));
      expect(elementNames(outcome)).toEqual(elementsOf(STRATEGIES.filter((s) => !s.optional)));
      expect(outcome.warnings).toContainEqual(
        expect.stringMatching(new RegExp(`^${optional.name}: skipped, the probe answered kernel_fault`)),
      );
      expect(outcome.raw.some((series) => optional.ownsSeries(series.name))).toBe(false);
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );

  it('never cover a fault in a required strategy: that fails the discovery, and the previous result stays served', async () => {
    await expect(discover(faultingOn(await simChannel(36), 'pchase.batch'))).rejects.toMatchObject({ code: 'kernel_fault' });
  });
});
