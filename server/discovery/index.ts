import { ProbeError, type ProbeChannel } from '../gpu/backend.js';
import type { CalibrateResult, DeviceProperties, HelloResult } from '../gpu/protocol.js';
import type { DiscoveryOutcome, ElementName, RawSeries } from '../model/document.js';
import { buildL1, measureL1 } from './l1.js';
import { buildL2, measureL2 } from './l2.js';
import { ProbeSession, type DiscoveryLogger } from './probe-session.js';

export { L1_SEARCH_PLAN } from './l1.js';
export { l2SearchPlan } from './l2.js';
export type { DiscoveryLogger } from './probe-session.js';

/** Bumped whenever the analysis of the same raw series may give a different document. */
export const ANALYSIS_VERSION = 'cpd-ks-3';

export interface DiscoverOptions {
  only?: ElementName[] | null;
  signal?: AbortSignal;
  onProgress?: (phase: string, fraction: number) => void;
  logger?: DiscoveryLogger;
}

/** Errors that stop one benchmark, not the discovery: the device cannot do it, or refused the request. */
const SKIPPABLE_CODES = new Set(['unsupported', 'bad_request', 'out_of_memory']);

/**
 * Measures one GPU through its channel (DESIGN.md: backend → strategy →
 * change-point analysis → document). The strategies only measure and record
 * raw series; the document is then built from those series alone, exactly
 * as `reanalyse` would build it from stored data.
 */
export async function discover(channel: ProbeChannel, options: DiscoverOptions = {}): Promise<DiscoveryOutcome> {
  const session = new ProbeSession(channel, options.signal, options.logger);
  const progress = options.onProgress ?? (() => undefined);
  const wants = (element: ElementName) => !options.only || options.only.includes(element);
  const warnings: string[] = [];

  progress('hello', 0);
  const hello = await session.request('hello', 'hello', {});
  const device = firstDevice(hello);
  progress('calibrate', 0.02);
  await session.request('calibrate', 'calibrate', { samples: 1024 });

  const guarded = async (element: string, measure: () => Promise<void>) => {
    try {
      await measure();
    } catch (error) {
      if (!(error instanceof ProbeError) || !SKIPPABLE_CODES.has(error.code)) throw error;
      warnings.push(`${element}: skipped, the probe answered ${error.code}: ${error.message}`);
      options.logger?.warn({ element, code: error.code, err: error.message }, 'benchmark skipped');
    }
  };
  if (wants('l1')) {
    progress('l1.size', 0.05);
    await guarded('l1', () => measureL1(session, device, (round) => progress(round, 0.1)));
  }
  if (wants('l2') || wants('deviceMemory')) {
    progress('l2.size', 0.2);
    let rounds = 0;
    await guarded('l2', () => measureL2(session, device, (round) => progress(round, Math.min(0.95, 0.2 + 0.2 * ++rounds))));
  }

  progress('analysis', 0.97);
  await new Promise((resolve) => setImmediate(resolve));
  const outcome = reanalyse(session.raw, options.only ?? null);
  outcome.warnings.unshift(...warnings);
  options.logger?.info({ elements: Object.keys(outcome.elements), rawSeries: outcome.raw.length, warnings: outcome.warnings.length }, 'discovery finished');
  progress('done', 1);
  return outcome;
}

/** Builds the outcome from recorded raw series only (no GPU): stored probes can be re-evaluated by a newer analysis. */
export function reanalyse(raw: RawSeries[], only: ElementName[] | null = null): DiscoveryOutcome {
  const wants = (element: ElementName) => !only || only.includes(element);
  const hello = raw.find((series) => series.op === 'hello');
  const device = hello ? firstDevice(hello.result as HelloResult) : null;
  const calibration = (raw.find((series) => series.op === 'calibrate')?.result as CalibrateResult | undefined) ?? null;
  const outcome: DiscoveryOutcome = { elements: {}, device: device ? { ...device } : {}, raw, warnings: [] };
  if (calibration) outcome.clock = { smClockHz: calibration.smClockHz, clockReadOverheadCycles: calibration.clockReadOverheadCycles };
  if (!device) {
    outcome.warnings.push('no hello series recorded: device properties unknown');
    return outcome;
  }
  if (wants('l1')) {
    const l1 = buildL1(raw, calibration);
    if (l1.element) outcome.elements.l1 = l1.element;
    outcome.warnings.push(...l1.warnings);
  }
  if (wants('l2') || wants('deviceMemory')) {
    const l2 = buildL2(raw, device, calibration);
    if (l2.l2 && wants('l2')) outcome.elements.l2 = l2.l2;
    if (l2.deviceMemory && wants('deviceMemory')) outcome.elements.deviceMemory = l2.deviceMemory;
    outcome.warnings.push(...l2.warnings);
  }
  return outcome;
}

function firstDevice(hello: HelloResult): DeviceProperties {
  const device = hello.devices[0];
  if (!device) throw new ProbeError('internal', 'the probe reported no device');
  return device;
}
