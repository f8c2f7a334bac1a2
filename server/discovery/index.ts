import type { ProbeChannel } from '../gpu/backend.js';
import { ProbeError } from '../protocol/probe-error.js';
import { supportedOps, type CalibrateResult, type DeviceProperties, type HelloResult } from '../protocol/ops.js';
import type { DiscoveryOutcome, ProbeTarget, RawSeries } from '../model/document.js';
import { ANALYSIS_PROGRESS, type Discovery, type Measurement, type MeasureOptions } from './contract.js';
import { ProbeSession } from './probe-session.js';
import { withMissPenalties } from './miss-penalty.js';
import { withPlausibility } from './plausibility.js';
import { PROBE_TARGETS, carryOverRaw, missingOps, strategiesFor, strategiesToBuild, type Strategy } from './registry.js';

export { L1_SEARCH_PLAN } from './strategies/l1.js';
export { l2SearchPlan } from './strategies/l2.js';
export type { DiscoveryLogger } from './probe-session.js';
export type { Discovery, Measurement, MeasureOptions } from './contract.js';
export {
  MEASURABLE_ELEMENTS,
  PROBE_TARGETS,
  STRATEGIES,
  carryOverRaw,
  missingOps,
  strategiesFor,
  strategyOwning,
  type Strategy,
  type StrategyBuild,
} from './registry.js';

/** Bumped whenever the analysis of the same raw series may give a different document. */
export const ANALYSIS_VERSION = 'cpd-ks-7';

export type DiscoverOptions = MeasureOptions;

/** Errors that stop one benchmark, not the discovery: the device cannot do it, or refused the request. */
const SKIPPABLE_CODES = new Set(['unsupported', 'bad_request', 'out_of_memory']);
/** What an optional strategy may also fail with and cost only itself (Strategy.optional); closed: an earlier optional one's fault left the probe gone. */
const OPTIONAL_DROP_CODES = new Set(['kernel_fault', 'crashed', 'timeout', 'internal', 'closed']);

/** Progress fractions: hello and calibrate before the strategies, analysis after; the strategies share the span between by weight. */
const STRATEGIES_FROM = 0.05;
const STRATEGIES_TO = 0.95;

/**
 * Measures one GPU through its channel (DESIGN.md: backend → strategy →
 * raw series). Each strategy of the registry that `only` asks for and the
 * probe's ops allow measures and records raw series. The document is built
 * from those series alone, later and elsewhere (`reanalyse`, in a worker).
 */
export async function measure(channel: ProbeChannel, options: MeasureOptions = {}): Promise<Measurement> {
  const session = new ProbeSession(channel, options.signal, options.logger);
  const progress = options.onProgress ?? (() => undefined);
  const only = options.only ?? null;
  const warnings: string[] = [];
  const warn = (warning: string, detail: object) => {
    warnings.push(warning);
    options.logger?.warn(detail, warning);
  };

  progress('hello', 0);
  const hello = await session.request('hello', 'hello', {});
  const device = firstDevice(hello);
  const supported = supportedOps(hello);
  progress('calibrate', 0.02);
  if (supported.has('calibrate')) await session.request('calibrate', 'calibrate', { samples: 1024 });
  else warn('calibrate: skipped, the probe does not support calibrate: latencies keep the clock-read overhead and have no ns', {});

  for (const element of only ?? []) {
    if (!PROBE_TARGETS.includes(element))
      warn(`${element}: not measured, no strategy measures it (measurable: ${PROBE_TARGETS.join(', ')})`, { element });
  }
  const runnable: Strategy[] = [];
  for (const strategy of strategiesFor(only)) {
    const missing = missingOps(strategy, hello);
    if (missing.length === 0) runnable.push(strategy);
    else
      warn(`${strategy.name}: skipped, the probe does not support ${missing.join(', ')} (${strategy.elements.join(', ')} not measured)`, {
        strategy: strategy.name,
        missing,
      });
  }

  const totalWeight = runnable.reduce((sum, strategy) => sum + strategy.progressWeight, 0);
  let from = STRATEGIES_FROM;
  for (const strategy of runnable) {
    const span = totalWeight > 0 ? ((STRATEGIES_TO - STRATEGIES_FROM) * strategy.progressWeight) / totalWeight : 0;
    progress(strategy.name, from);
    // Rounds are not known in advance: each closes half of what is left of the strategy's span.
    let rounds = 0;
    const onRound = (round: string) => progress(round, from + span * (1 - 0.5 ** ++rounds));
    try {
      await session.measureFamily(strategy, () => strategy.measure(session, device, onRound), warn);
    } catch (error) {
      const dropped =
        error instanceof ProbeError &&
        (SKIPPABLE_CODES.has(error.code) || (strategy.optional === true && OPTIONAL_DROP_CODES.has(error.code)));
      if (!dropped) throw error;
      // A benchmark cut short leaves a partial sweep: drop it, so the document holds no element built from half a measurement.
      session.discard((series) => strategy.ownsSeries(series.name));
      warn(`${strategy.name}: skipped, the probe answered ${error.code}: ${error.message}`, {
        strategy: strategy.name,
        code: error.code,
        err: error.message,
      });
    }
    from += span;
  }

  options.logger?.info({ rawSeries: session.raw.length, warnings: warnings.length }, 'measurements finished');
  return { raw: session.raw, warnings, ...(session.interference === null ? {} : { interference: session.interference }) };
}

/**
 * Measures and analyses in one call, on the caller's thread: for benches,
 * scripts and tests. The daemon measures with `measure` and analyses in a
 * worker (server/results), so the event loop never runs the analysis.
 */
export async function discover(channel: ProbeChannel, options: DiscoverOptions = {}): Promise<DiscoveryOutcome> {
  const measured = await measure(channel, options);
  options.onProgress?.('analysis', ANALYSIS_PROGRESS);
  const outcome = reanalyse(measured.raw, options.only ?? null);
  outcome.warnings.unshift(...measured.warnings);
  options.onProgress?.('done', 1);
  return outcome;
}

/**
 * Builds the outcome from recorded raw series only (no GPU): stored probes can
 * be re-evaluated by a newer analysis. Every strategy of the registry that
 * `only` asks for (all for null) and that recorded series here builds its
 * elements; with `only`, only the elements asked for are kept.
 */
export function reanalyse(raw: RawSeries[], only: ProbeTarget[] | null = null): DiscoveryOutcome {
  const hello = raw.find((series) => series.op === 'hello');
  const device = hello ? firstDevice(hello.result as HelloResult) : null;
  const calibration = (raw.find((series) => series.op === 'calibrate')?.result as CalibrateResult | undefined) ?? null;
  const outcome: DiscoveryOutcome = { elements: {}, device: device ? { ...device } : {}, raw, warnings: [] };
  if (calibration) outcome.clock = { smClockHz: calibration.smClockHz, clockReadOverheadCycles: calibration.clockReadOverheadCycles };
  if (!device) {
    outcome.warnings.push('no hello series recorded: device properties unknown');
    return outcome;
  }
  const recorded = (strategy: Strategy) => raw.some((series) => strategy.ownsSeries(series.name));
  for (const strategy of strategiesToBuild(only).filter(recorded)) {
    const built = strategy.build(raw, device, calibration);
    // Strategies may share an element, each adding its own attributes (the L2's size and latency, its bandwidths): merged in registry order.
    for (const element of strategy.elements) {
      const topology = built.elements[element];
      if (topology && (only === null || only.includes(element))) outcome.elements[element] = { ...outcome.elements[element], ...topology };
    }
    if (built.carveout && !outcome.carveout) outcome.carveout = built.carveout;
    if (built.compute && !outcome.compute) outcome.compute = built.compute;
    if (built.traffic && !outcome.traffic) outcome.traffic = built.traffic;
    outcome.warnings.push(...built.warnings);
  }
  outcome.elements = withMissPenalties(outcome.elements);
  return withPlausibility(outcome);
}

/** server/discovery as the daemon injects it; its analysis runs in workers that import this module. */
export const DISCOVERY: Discovery = {
  version: ANALYSIS_VERSION,
  discover: measure,
  reanalyse,
  carryOverRaw,
  analysedInWorkers: true,
};

function firstDevice(hello: HelloResult): DeviceProperties {
  const device = hello.devices[0];
  if (!device) throw new ProbeError('internal', 'the probe reported no device');
  return device;
}
