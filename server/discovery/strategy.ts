import type { CalibrateResult, DeviceProperties, ProbeOp } from '../protocol/ops.js';
import type { ComputeTopology } from '../model/compute-schema.js';
import type { Carveout, ElementName, ElementTopology, RawSeries } from '../model/document.js';
import type { TrafficTopology } from '../model/traffic-schema.js';
import type { ProbeSession } from './probe-session.js';

/** What a strategy's build makes of recorded series. */
export interface StrategyBuild {
  elements: Partial<Record<ElementName, ElementTopology>>;
  warnings: string[];
  /** The L1/shared split the strategy's per-SM launches ran under, when they record it. */
  carveout?: Carveout;
  /** The document's compute section (the compute strategy builds it). */
  compute?: ComputeTopology;
  /** The document's traffic section (the traffic strategy builds it). */
  traffic?: TrafficTopology;
}

/**
 * One benchmark family (DESIGN.md: a registry of strategies, one module per
 * family). `measure` talks to the probe and only records raw series through
 * the session; `build` reads those series back and is pure, so a stored probe
 * can be re-analysed without a GPU. Registered in registry.ts: discovery,
 * re-analysis, progress and the API's accepted `only` values follow from it.
 */
export interface Strategy {
  /** Short and stable: it prefixes the strategy's warnings and names its progress phase. */
  name: string;
  /** The document elements `build` can produce. */
  elements: readonly ElementName[];
  /** Probe ops `measure` sends; a probe whose hello lacks one skips this strategy with a warning. */
  requiredOps: readonly ProbeOp[];
  /** This strategy's share of a full discovery's time, relative to the others' (progress fractions follow from it). */
  progressWeight: number;
  measure(session: ProbeSession, device: DeviceProperties, onRound?: (round: string) => void): Promise<void>;
  build(raw: readonly RawSeries[], device: DeviceProperties, calibration: CalibrateResult | null): StrategyBuild;
  /**
   * A strategy beside the memory discovery whose failure must not cost it:
   * a probe fault, crash or timeout inside it drops its series with a
   * warning instead of failing the discovery. Registered after every
   * required strategy, since a fault may leave the probe gone.
   */
  optional?: boolean;
  /**
   * A strategy that measures pairs of elements: a partial probe that re-runs
   * it for some elements keeps the previous result's series it did not record
   * again (the pairs between elements this probe left alone), instead of
   * dropping them all.
   */
  keepsUnrepeatedSeries?: boolean;
  /**
   * Run only when a probe's `only` names the strategy (its `name`), never by
   * a full probe (it costs more than the full probe's budget); a full probe
   * keeps its series from the previous result.
   */
  optIn?: boolean;
  /** Whether `measure` records series under this name (series of the whole session, hello and calibrate, belong to none). */
  ownsSeries(seriesName: string): boolean;
}

/** `ownsSeries` for a strategy that names its series "<prefix>" or "<prefix>.<round>". */
export function seriesUnder(prefix: string): (seriesName: string) => boolean {
  return (seriesName) => seriesName === prefix || seriesName.startsWith(`${prefix}.`);
}
