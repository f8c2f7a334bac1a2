import { median } from '../../analysis/descriptive.js';
import { ProbeError } from '../../protocol/probe-error.js';
import type { DeviceProperties, TrafficArgs, TrafficCase, TrafficMethod, TrafficResult } from '../../protocol/ops.js';
import type { RawSeries } from '../../model/document.js';
import type {
  TrafficFallbackError,
  TrafficFlag,
  TrafficPoint as CurvePoint,
  TrafficTopology,
  TrafficValue,
} from '../../model/traffic-schema.js';
import type { ProbeSession } from '../probe-session.js';
import { seriesUnder, type Strategy, type StrategyBuild } from '../strategy.js';
import { countedPoints, fitTraffic, parametersOf, timedPoints, type Estimate, type Flag, type TrafficPoint } from './traffic-analysis.js';
import { lineSizeParameters, predictTraffic, type TrafficParameters } from '../traffic-predict.js';

/**
 * L2 ↔ device-memory traffic (issue 20; the LLC-memory traffic paper): the
 * paper's stride sweep (1 to 1024 elements of 4 B) for reads, writes (to a
 * fresh and to a written array), read-modify-writes and the paper's vecMul,
 * counted with hardware counters where the probe can read them, and timed
 * too (the fallback; where both ran, its error against the counters is
 * served). Isolated reads under the smallest L2 fetch limit give the read
 * transaction. Opt-in (`only: ["traffic"]`): a counted sweep takes seconds,
 * past the full probe's budget.
 */
export const TRAFFIC = 'traffic';
const COUNTERS = `${TRAFFIC}.counters`;
const TIMING = `${TRAFFIC}.timing`;
/** Why counters could not be read: the probe's answer, recorded so the analysis can say it. */
export const COUNTERS_REFUSED = `${TRAFFIC}.counters-refused`;
export const TRAFFIC_STRIDES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024] as const;
const ELEMENT_BYTES = 4;
const MIB = 1024 ** 2;
/** Past the line-size model by more than this share: the prefetch effect. */
const DEPARTURE = 0.1;

/** Each array spans 16 L2s (the paper's 200M floats on an H100), at least 64 MiB, and the three with the flush buffer fit a quarter of memory. */
export function trafficFootprintBytes(device: Pick<DeviceProperties, 'l2CacheSizeBytes' | 'totalMemoryBytes'>): number {
  const wanted = Math.max(64 * MIB, 16 * device.l2CacheSizeBytes);
  const fits = (device.totalMemoryBytes / 4 - 4 * device.l2CacheSizeBytes) / 3;
  return Math.max(MIB, Math.floor(Math.min(wanted, fits) / MIB) * MIB);
}

function sweep(
  pattern: TrafficCase['pattern'],
  targets: ReadonlyArray<'fresh' | 'written'>,
  strides: readonly number[] = TRAFFIC_STRIDES,
): TrafficCase[] {
  return strides.flatMap((strideElements) => targets.map((target) => ({ pattern, elementBytes: ELEMENT_BYTES, strideElements, target })));
}

const smallFootprint = (footprintBytes: number) => Math.max(16, Math.floor(footprintBytes / 16 / 16) * 16);

/** The requests of one method, in order: name suffix and args. */
export function trafficPlan(method: TrafficMethod, footprintBytes: number): Array<{ round: string; args: TrafficArgs }> {
  const base = { method, footprintBytes, ...(method === 'timing' ? { repetitions: 3 } : {}) };
  return [
    { round: 'read', args: { ...base, cases: sweep('read', ['written']) } },
    { round: 'write', args: { ...base, cases: sweep('write', ['fresh', 'written']) } },
    { round: 'rmw', args: { ...base, cases: sweep('rmw', ['written']) } },
    { round: 'vecmul', args: { ...base, cases: sweep('vecmul', ['fresh']) } },
    { round: 'read-fetch32', args: { ...base, l2FetchGranularityBytes: 32, cases: sweep('read', ['written'], [64, 256, 1024]) } },
    // Timing only: the stride-1 read of a sixteenth of the footprint, so time = launch cost + bytes / bandwidth has two points.
    ...(method === 'timing'
      ? [{ round: 'read-small', args: { ...base, footprintBytes: smallFootprint(footprintBytes), cases: sweep('read', ['written'], [1]) } }]
      : []),
  ];
}

export async function measureTraffic(session: ProbeSession, device: DeviceProperties, onRound?: (round: string) => void): Promise<void> {
  const footprintBytes = trafficFootprintBytes(device);
  for (const method of ['counters', 'timing'] as const) {
    for (const { round, args } of trafficPlan(method, footprintBytes)) {
      onRound?.(`${TRAFFIC}.${method}.${round}`);
      try {
        await session.request(`${TRAFFIC}.${method}.${round}`, 'traffic', args);
      } catch (error) {
        // No counters here (no CUPTI, profiling for administrators only, AMD): say why, and time instead.
        if (method === 'counters' && error instanceof ProbeError && error.code === 'unsupported') {
          session.raw.push({ name: COUNTERS_REFUSED, op: 'traffic', args, result: { code: error.code, message: error.message } });
          break;
        }
        throw error;
      }
    }
  }
}

function results(raw: readonly RawSeries[], prefix: string): Array<{ result: TrafficResult; fetchLimitBytes: number | null }> {
  return raw
    .filter((s) => s.op === 'traffic' && s.name.startsWith(`${prefix}.`))
    .map((s) => ({ result: s.result as TrafficResult, fetchLimitBytes: (s.args as TrafficArgs).l2FetchGranularityBytes ?? null }));
}

const round2 = (x: number) => Math.round(x * 100) / 100;

function value(e: Estimate | null, unit: 'bytes' | 'ratio', method: TrafficMethod, note: string): TrafficValue | null {
  return e
    ? {
        value: unit === 'bytes' ? Math.round(e.value * 10) / 10 : round2(e.value),
        unit,
        source: 'microbenchmark',
        method,
        confidence: round2(e.confidence),
        note,
      }
    : null;
}

function flag(f: Flag | null, method: TrafficMethod, note: string): TrafficFlag | null {
  return f
    ? {
        value: f.value,
        source: 'microbenchmark',
        method,
        confidence: round2(f.confidence),
        note: `${note} (read share ${round2(f.readShare)})`,
      }
    : null;
}

function curvePoint(p: TrafficPoint, lineModel: TrafficParameters | null): CurvePoint {
  // A measured point carries every field of the query that predicts it.
  const useful = predictTraffic(lineModel ?? NEUTRAL, p).usefulBytes;
  return {
    pattern: p.pattern,
    target: p.target,
    elementBytes: p.elementBytes,
    strideBytes: p.strideBytes,
    accesses: p.accesses,
    usefulBytes: useful,
    dramReadBytes: p.readBytes ?? p.totalBytes,
    dramWriteBytes: p.writeBytes ?? 0,
    bytesPerUsefulByte: round2(p.totalBytes / useful),
    lineModelBytesPerUsefulByte: lineModel ? round2(predictTraffic(lineModel, p).bytesPerUsefulByte) : 0,
    method: p.method,
  };
}

/** Parameters only used for useful-byte counts when nothing was fitted. */
const NEUTRAL: TrafficParameters = {
  readTransactionBytes: 32,
  writeTransactionBytes: 32,
  readFillBytes: 32,
  storeFillBytes: 32,
  storesAllocate: { fresh: false, written: false },
  fullSectorStoresRead: false,
};

const key = (p: TrafficPoint) => `${p.pattern}/${p.target}/${p.elementBytes}/${p.strideBytes}/${p.footprintBytes}/${p.fetchLimitBytes}`;

function fallbackError(counted: readonly TrafficPoint[], timed: readonly TrafficPoint[]): TrafficTopology['fallbackError'] {
  const byKey = new Map(counted.map((p) => [key(p), p]));
  const points: TrafficFallbackError[] = timed.flatMap((t) => {
    const c = byKey.get(key(t));
    if (!c || !(c.totalBytes > 0)) return [];
    const errorPercent = round2((Math.abs(t.totalBytes - c.totalBytes) / c.totalBytes) * 100);
    return [
      {
        strideBytes: t.strideBytes,
        pattern: t.pattern,
        countedBytes: Math.round(c.totalBytes),
        timedBytes: Math.round(t.totalBytes),
        errorPercent,
      },
    ];
  });
  if (points.length === 0) return null;
  const errors = points.map((p) => p.errorPercent);
  return { medianPercent: round2(median(errors)), maxPercent: Math.max(...errors), points };
}

/** The document's traffic section from recorded series (pure); null when the family did not run. */
export function buildTraffic(raw: readonly RawSeries[]): {
  traffic: TrafficTopology | null;
  parameters: TrafficParameters | null;
  warnings: string[];
} {
  const counters = results(raw, COUNTERS);
  const timing = results(raw, TIMING);
  const refused = raw.find((s) => s.name === COUNTERS_REFUSED)?.result as { message?: string } | undefined;
  if (counters.length === 0 && timing.length === 0) return { traffic: null, parameters: null, warnings: [] };
  const counted = counters.flatMap(({ result, fetchLimitBytes }) => countedPoints(result, fetchLimitBytes));
  const timed = timedPoints(timing);
  const fit = fitTraffic([...counted, ...timed]);
  const method = fit.method;
  const parameters = parametersOf(fit);
  const lineModel = parameters ? lineSizeParameters(parameters) : null;
  const warnings = fit.warnings.map((w) => `traffic: ${w}`);
  const passes = counters.map(({ result }) => result.passes ?? 1).filter((n) => n > 1);
  if (passes.length > 0)
    warnings.push(
      `traffic: the counters needed ${Math.max(...passes)} replay passes; a replayed kernel may find lines the previous pass left in the L2`,
    );
  const curvePoints = (method === 'counters' ? counted : timed).filter((p) => p.fetchLimitBytes === null);
  const curve = curvePoints.map((p) => curvePoint(p, lineModel));
  const departs = curve
    .filter(
      (p) =>
        p.pattern === 'read' && p.lineModelBytesPerUsefulByte > 0 && p.bytesPerUsefulByte > (1 + DEPARTURE) * p.lineModelBytesPerUsefulByte,
    )
    .map((p) => p.strideBytes);
  const prefetch: Estimate | null =
    fit.readFill && fit.readTransaction ? { ...fit.readFill, value: fit.readFill.value / fit.readTransaction.value } : null;
  const footprints = [...counted, ...timed].map((p) => p.footprintBytes);
  const how =
    method === 'counters'
      ? 'dram__bytes_read/write.sum (CUPTI) around each kernel, flushed L2 before and after'
      : 'kernel time × the stride-1 bandwidth of the same pattern';
  const traffic: TrafficTopology = {
    method,
    countersUnavailable: method === 'counters' ? null : (refused?.message ?? 'the probe did not count (no counters series recorded)'),
    footprintBytes: footprints.length > 0 ? Math.max(...footprints) : 0,
    readTransactionBytes: value(
      fit.readTransaction,
      'bytes',
      method,
      `isolated reads (stride ≥ 256 B) under the smallest L2 fetch limit, per access, as a power of two; ${how}`,
    ),
    writeTransactionBytes: value(
      fit.writeTransaction,
      'bytes',
      method,
      `isolated writes (stride ≥ 256 B), bytes written per access, as a power of two; ${how}`,
    ),
    readFillBytes: value(fit.readFill, 'bytes', method, `isolated reads under the default L2 fetch limit: bytes read per access; ${how}`),
    storeFillBytes: value(fit.storeFill, 'bytes', method, `isolated writes that allocate: bytes read per access; ${how}`),
    prefetchFactor: value(
      prefetch,
      'ratio',
      method,
      'readFillBytes / readTransactionBytes: what an isolated read moves over one transaction',
    ),
    storesAllocate: {
      fresh: flag(fit.storesAllocate.fresh, method, 'a store every other element of a never-written array reads its sectors'),
      written: flag(fit.storesAllocate.written, method, 'a store every other element of a written array reads its sectors'),
    },
    fullSectorStoresRead: flag(fit.fullSectorStoresRead, method, 'stores of every element (whole sectors) read them'),
    curve,
    departsFromLineModelAtStrideBytes: departs.length > 0 ? Math.min(...departs) : null,
    fallbackError: method === 'counters' ? fallbackError(counted, timed) : null,
    note: `one pass of each pattern over arrays of ${footprints.length > 0 ? Math.max(...footprints) : 0} B (${how}); useful bytes are the accessed elements' bytes (rmw 2, vecmul 3 per access)`,
  };
  if (!parameters) warnings.push('traffic: too few points for the predictor (no isolated reads or writes recorded)');
  return { traffic, parameters, warnings };
}

export const TRAFFIC_STRATEGY: Strategy = {
  name: TRAFFIC,
  elements: [],
  requiredOps: ['traffic'],
  progressWeight: 0.3,
  optional: true,
  optIn: true,
  measure: (session, device, onRound) => measureTraffic(session, device, onRound),
  build(raw): StrategyBuild {
    const { traffic, warnings } = buildTraffic(raw);
    return { elements: {}, warnings, ...(traffic ? { traffic } : {}) };
  },
  ownsSeries: seriesUnder(TRAFFIC),
};
