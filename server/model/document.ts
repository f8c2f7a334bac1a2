/**
 * The shapes of what clients get (DESIGN.md: the document). Every value says
 * where it came from and how sure we are.
 */

export type ValueSource = 'microbenchmark' | 'api' | 'nvml' | 'derived';
export type ValueUnit = 'bytes' | 'cycles' | 'ns' | 'bytes/s' | 'count' | 'hz';

export interface MeasuredValue {
  value: number;
  unit: ValueUnit;
  source: ValueSource;
  /** 0..1; present for microbenchmark and derived values. */
  confidence?: number;
}

export interface LatencyValue {
  unit: 'cycles';
  source: ValueSource;
  mean: number;
  p50: number;
  p95: number;
  stdev: number;
  sampleCount: number;
  /** Nanoseconds at the measured SM clock, when it is known. */
  meanNs?: number;
  confidence?: number;
}

export interface ElementTopology {
  size?: MeasuredValue;
  latency?: LatencyValue;
  lineSize?: MeasuredValue;
  fetchGranularity?: MeasuredValue;
  /** Per SM (per-SM caches) or per GPU (L2 segments). */
  amount?: MeasuredValue & { per: 'sm' | 'gpu' };
  /** Segment size where the cache is split (L2 partitions). */
  segmentSize?: MeasuredValue;
  sharedWith?: string[];
  readBandwidth?: MeasuredValue;
  writeBandwidth?: MeasuredValue;
  missPenalty?: MeasuredValue;
}

/** NVIDIA: l1 l2 texture readOnly constantL1 constantL15 shared deviceMemory; AMD: vL1 sL1d l2 l3 lds deviceMemory. */
export type ElementName =
  | 'l1'
  | 'l2'
  | 'texture'
  | 'readOnly'
  | 'constantL1'
  | 'constantL15'
  | 'shared'
  | 'deviceMemory'
  | 'vL1'
  | 'sL1d'
  | 'l3'
  | 'lds';

export const ELEMENT_NAMES: readonly ElementName[] = [
  'l1',
  'l2',
  'texture',
  'readOnly',
  'constantL1',
  'constantL15',
  'shared',
  'deviceMemory',
  'vL1',
  'sL1d',
  'l3',
  'lds',
];

/** One raw measurement series kept beside a result, so a better analysis can re-read it. */
export interface RawSeries {
  /** Which benchmark step produced it, e.g. "l1.size.sweep". */
  name: string;
  op: string;
  args: unknown;
  result: unknown;
}

/** What discovery returns for one GPU. */
export interface DiscoveryOutcome {
  elements: Partial<Record<ElementName, ElementTopology>>;
  /** SM clock and clock-read overhead used to convert cycles. */
  clock?: { smClockHz?: number; clockReadOverheadCycles?: number };
  /** Device properties as the runtime reported them (source "api"). */
  device: Record<string, unknown>;
  raw: RawSeries[];
  warnings: string[];
}

/** The stored, immutable result of one probe (one row of probe_results). */
export interface ResultDocument {
  schemaVersion: 1;
  gpu: { uuid: string; name: string; vendor: 'nvidia' | 'amd'; pciBusId: string | null };
  simulated: boolean;
  probe: {
    resultId?: number;
    probeVersion: string;
    analysisVersion: string;
    driverVersion: string;
    startedAt: string;
    finishedAt: string;
    durationMs: number;
    jobId: string;
    only: ElementName[] | null;
  };
  device: Record<string, unknown>;
  clock: DiscoveryOutcome['clock'] | null;
  elements: Partial<Record<ElementName, ElementTopology>>;
  warnings: string[];
}
