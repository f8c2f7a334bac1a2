import type { LineSizePoint, StridePoint } from '../analysis/index.js';
import type { ChaseLaunchInfo, PchaseArgs, PchaseBatchArgs, PchaseBatchResult, PchaseResult } from '../protocol/ops.js';
import type { RawSeries } from '../model/document.js';

/**
 * Reads chase series back as (array size, stride, samples) triples, whichever
 * op recorded them: a pchase.batch launch gives one per chaser, a pchase one.
 * Pure, for measuring and re-analysis alike.
 */
export interface ChaseSamples {
  sizeBytes: number;
  strideBytes: number;
  samples: readonly number[];
  launch?: ChaseLaunchInfo;
}

export function chaseSamples(raw: readonly RawSeries[], name: string): ChaseSamples[] {
  const out: ChaseSamples[] = [];
  for (const series of raw) {
    if (series.name !== name) continue;
    if (series.op === 'pchase.batch') {
      const args = series.args as PchaseBatchArgs;
      const result = series.result as PchaseBatchResult;
      for (const entry of result.series)
        out.push(withLaunch({ sizeBytes: entry.arrayBytes, strideBytes: args.strideBytes, samples: entry.latenciesCycles }, result.launch));
    } else if (series.op === 'pchase') {
      const args = series.args as PchaseArgs;
      const result = series.result as PchaseResult;
      out.push(withLaunch({ sizeBytes: args.arrayBytes, strideBytes: args.strideBytes, samples: result.latenciesCycles }, result.launch));
    }
  }
  return out;
}

function withLaunch(samples: ChaseSamples, launch: ChaseLaunchInfo | undefined): ChaseSamples {
  return launch ? { ...samples, launch } : samples;
}

/** Every chaser of a stride pooled into one point, strides ascending. */
export function stridePoints(raw: readonly RawSeries[], name: string): StridePoint[] {
  const byStride = new Map<number, number[]>();
  for (const chase of chaseSamples(raw, name)) {
    const pooled = byStride.get(chase.strideBytes) ?? [];
    pooled.push(...chase.samples);
    byStride.set(chase.strideBytes, pooled);
  }
  return [...byStride.entries()].sort(([a], [b]) => a - b).map(([strideBytes, samples]) => ({ strideBytes, samples }));
}

export function lineSizePoints(raw: readonly RawSeries[], name: string): LineSizePoint[] {
  return chaseSamples(raw, name).map(({ sizeBytes, strideBytes, samples }) => ({ sizeBytes, strideBytes, samples }));
}
