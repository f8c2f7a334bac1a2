import { analyseL2Partitions, type PartitionSeries } from '../../analysis/l2-partitions.js';
import type { CalibrateResult, DeviceProperties, L2PartitionArgs, L2PartitionResult } from '../../protocol/ops.js';
import type { AmountValue, L2Partitions, RawSeries } from '../../model/document.js';
import { buildFarnear, measureFarnear } from './l2-farnear.js';
import { l2PartitionCapacityBytes } from './l2.js';
import { toLatencyValue } from '../latency-value.js';
import type { ProbeSession } from '../probe-session.js';
import { seriesUnder, type Strategy } from '../strategy.js';

/**
 * The L2 as partitions (issue 9, "the L2 as it really is"): every SM at once
 * times a load of each 256 B chunk of one shared 256 KiB array, right after
 * touching it itself (l2.partition, shared mode). Chunks are homed in one
 * partition by an address hash, so one SM's hits come in a near and a far
 * class, and the SMs fall in groups that find opposite chunks near: the SM →
 * group map differs between boards of one model, so it is measured per GPU.
 * A few launches of a few milliseconds each; each SM's chunks of every launch
 * are joined (a launch's array may sit at other addresses than the last's).
 */
const SERIES = 'l2-partition';
/** Two launches of 1024 chunks each: 2048 chunks per SM in the analysis, about 0.55 MB of raw series per launch on 132 SMs. */
const RUNS = 2;
const REQUEST: L2PartitionArgs = { mode: 'shared', arrayBytes: 256 * 1024, strideBytes: 256 };

export async function measureL2Partitions(
  session: ProbeSession,
  device: DeviceProperties,
  onRound?: (round: string) => void,
): Promise<void> {
  for (let run = 0; run < RUNS; run += 1) await session.request(SERIES, 'l2.partition', REQUEST);
  onRound?.(SERIES);
  // Past one partition, past the L2, shared data and the persisting window (l2-farnear.ts): one SM of each group.
  const analysis = analyseL2Partitions(partitionRuns(session.raw));
  if (analysis.found && analysis.count === 2) await measureFarnear(session, device, analysis.smGroups);
}

/** The shared-mode launches recorded under this strategy's name: each one's SMs. */
export function partitionRuns(raw: readonly RawSeries[]): PartitionSeries[][] {
  return raw
    .filter((series) => series.name === SERIES && series.op === 'l2.partition')
    .map((series) => series.result as L2PartitionResult)
    .filter((result) => result.mode === 'shared')
    .map((result) => result.sms);
}

/** The l2 element's partitions from recorded series (pure); null with a warning when there is nothing to build from. */
export function buildL2Partitions(
  raw: readonly RawSeries[],
  calibration: CalibrateResult | null,
): { partitions: L2Partitions | null; warnings: string[] } {
  const runs = partitionRuns(raw);
  if (runs.length === 0) return { partitions: null, warnings: [] };
  const analysis = analyseL2Partitions(runs);
  if (!analysis.found) return { partitions: null, warnings: [`l2: no partitions (${analysis.reason})`] };
  const partitions: L2Partitions = {
    count: analysis.count,
    nearLatency: toLatencyValue(analysis.nearSamples, calibration),
    smGroups: analysis.smGroups,
    confidence: analysis.confidence,
    source: 'microbenchmark',
  };
  if (analysis.count === 2) {
    partitions.farLatency = toLatencyValue(analysis.farSamples, calibration);
    const left = analysis.unsplitSmIds.length;
    partitions.note = `groups of SMs that find the same 256 B chunks of one shared array near (hits at the near latency)${left > 0 ? `; ${left} SMs whose hits did not split in two are in no group (${analysis.unsplitSmIds.join(', ')})` : ''}`;
  } else {
    partitions.note = 'every SM’s L2 hits are one latency class: no near and far partition seen';
  }
  const warnings =
    analysis.count === 2 && analysis.smGroups.length < 2
      ? ['l2: every SM finds the same chunks near: one SM group seen of two partitions']
      : [];
  const farnear = buildFarnear(raw, partitions, calibration);
  Object.assign(partitions, farnear.fields);
  warnings.push(...farnear.warnings);
  return { partitions, warnings };
}

/**
 * The L2's amount per GPU is the measured partition count (it replaces the l2
 * strategy's API size over segment size, merged later in registry order). That
 * division stays as a cross-check: a warning when the two disagree.
 */
export function partitionAmount(
  partitions: L2Partitions,
  raw: readonly RawSeries[],
  device: DeviceProperties,
): { value: AmountValue; warnings: string[] } {
  const value: AmountValue = {
    value: partitions.count,
    unit: 'count',
    source: 'microbenchmark',
    per: 'gpu',
    confidence: partitions.confidence,
    note: 'L2 partitions: the SM groups that find opposite 256 B chunks near (l2.partition)',
  };
  const capacity = l2PartitionCapacityBytes(raw);
  const warnings: string[] = [];
  if (capacity !== null && device.l2CacheSizeBytes > 0) {
    const divided = Math.round(device.l2CacheSizeBytes / capacity);
    if (divided !== partitions.count)
      warnings.push(
        `l2: ${partitions.count} partitions measured, but the API size over one partition's capacity (${capacity} bytes) gives ${divided}`,
      );
  }
  return { value, warnings };
}

export const L2_STRUCTURE_STRATEGY: Strategy = {
  name: 'l2-partition',
  elements: ['l2'],
  requiredOps: ['l2.partition'],
  // A few launches of a few milliseconds (l2.farnear and l2.persist, when the probe has them, a few more).
  progressWeight: 0.2,
  // A new kernel beside the memory discovery: a fault in it costs only the partitions.
  optional: true,
  measure: measureL2Partitions,
  build(raw, device, calibration) {
    const { partitions, warnings } = buildL2Partitions(raw, calibration);
    if (!partitions) return { elements: {}, warnings };
    const amount = partitionAmount(partitions, raw, device);
    warnings.push(...amount.warnings);
    return { elements: { l2: { partitions, amount: amount.value } }, warnings };
  },
  ownsSeries: seriesUnder(SERIES),
};
