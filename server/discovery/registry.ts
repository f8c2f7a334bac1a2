import { supportedOps, type HelloResult, type ProbeOp } from '../protocol/ops.js';
import { ELEMENT_NAMES, PROBE_FAMILIES, type ElementName, type ProbeTarget, type RawSeries } from '../model/document.js';
import { BANDWIDTH_STRATEGY } from './strategies/bandwidth.js';
import { COMPUTE_STRATEGY } from './strategies/compute.js';
import { CONSTANT_STRATEGY } from './strategies/constant.js';
import { L1_STRATEGY, READ_ONLY_STRATEGY, TEXTURE_STRATEGY } from './strategies/l1.js';
import { L2_STRATEGY } from './strategies/l2.js';
import { L2_STRUCTURE_STRATEGY } from './strategies/l2-structure.js';
import { SHARED_STRATEGY } from './strategies/shared.js';
import { SHARING_STRATEGY } from './strategies/sharing.js';
import type { Strategy } from './strategy.js';
import { TRAFFIC_STRATEGY } from './strategies/traffic.js';

export type { Strategy, StrategyBuild } from './strategy.js';

/**
 * Every benchmark family discovery knows, in the order they run (and their
 * elements and warnings appear). Adding one is a module exporting a Strategy
 * and a line here: see docs/adding-a-benchmark.md.
 */
export const STRATEGIES: readonly Strategy[] = [
  L1_STRATEGY,
  TEXTURE_STRATEGY,
  READ_ONLY_STRATEGY,
  CONSTANT_STRATEGY,
  SHARED_STRATEGY,
  SHARING_STRATEGY,
  L2_STRATEGY,
  BANDWIDTH_STRATEGY,
  COMPUTE_STRATEGY,
  L2_STRUCTURE_STRATEGY,
  TRAFFIC_STRATEGY,
];

/** The elements some strategy measures, in ELEMENT_NAMES order: what a probe request's `only` may name. */
export const MEASURABLE_ELEMENTS: readonly ElementName[] = ELEMENT_NAMES.filter((element) =>
  STRATEGIES.some((strategy) => strategy.elements.includes(element)),
);

/** What a probe request's `only` may name: the measurable elements, then the opt-in families (each an opt-in strategy's name). */
export const PROBE_TARGETS: readonly ProbeTarget[] = [
  ...MEASURABLE_ELEMENTS,
  ...PROBE_FAMILIES.filter((family) => STRATEGIES.some((s) => s.optIn === true && s.name === family)),
];

function asked(strategy: Strategy, only: readonly ProbeTarget[]): boolean {
  return (
    strategy.elements.some((element) => only.includes(element)) ||
    (strategy.optIn === true && (only as readonly string[]).includes(strategy.name))
  );
}

/** The strategies a probe runs for `only` (null: every strategy but the opt-in ones), in registry order. */
export function strategiesFor(only: readonly ProbeTarget[] | null): Strategy[] {
  if (only === null) return STRATEGIES.filter((strategy) => strategy.optIn !== true);
  return STRATEGIES.filter((strategy) => asked(strategy, only));
}

/** The strategies whose series an analysis builds from for `only` (null: all of them, the opt-in ones too). */
export function strategiesToBuild(only: readonly ProbeTarget[] | null): Strategy[] {
  return only === null ? [...STRATEGIES] : strategiesFor(only);
}

/** The strategy that recorded a series; undefined for the session's own series (hello, calibrate). */
export function strategyOwning(seriesName: string): Strategy | undefined {
  return STRATEGIES.find((strategy) => strategy.ownsSeries(seriesName));
}

/** The strategy's required ops that a probe's hello does not list (none when the hello lists no ops: an older probe). */
export function missingOps(strategy: Strategy, hello: Partial<Pick<HelloResult, 'ops'>>): ProbeOp[] {
  const supported = supportedOps(hello);
  return strategy.requiredOps.filter((op) => !supported.has(op));
}

/**
 * The raw series of a partial probe's result: every fresh series, plus the
 * previous result's series of the strategies this probe did not re-measure
 * (and, of a strategy that measures pairs, the series it did not record
 * again), so the new result can be rebuilt (re-analysed) from its own raw data alone.
 * Series of the whole session (hello, calibrate) come from the fresh run.
 */
export function carryOverRaw(
  previous: readonly RawSeries[],
  fresh: readonly RawSeries[],
  only: readonly ProbeTarget[] | null,
): RawSeries[] {
  const remeasured = new Set(strategiesFor(only));
  // A full probe runs no opt-in strategy: their series come along from the previous result.
  if (only === null) return [...fresh, ...previous.filter((series) => strategyOwning(series.name)?.optIn === true)];
  const freshNames = new Set(fresh.map((series) => series.name));
  const carried = previous.filter((series) => {
    const owner = strategyOwning(series.name);
    if (owner === undefined) return false;
    return !remeasured.has(owner) || (owner.keepsUnrepeatedSeries === true && !freshNames.has(series.name));
  });
  return [...fresh, ...carried];
}
