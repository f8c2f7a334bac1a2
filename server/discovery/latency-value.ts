import { latencyConfidence, summarizeLatency } from '../analysis/index.js';
import type { CalibrateResult } from '../protocol/ops.js';
import type { LatencyValue } from '../model/document.js';

/** A latency attribute from raw samples: outliers dropped, clock-read overhead subtracted, ns at the measured clock. */
export function toLatencyValue(samples: readonly number[], calibration: CalibrateResult | null): LatencyValue {
  const summary = summarizeLatency(samples, calibration?.clockReadOverheadCycles ?? 0);
  const value: LatencyValue = {
    unit: 'cycles',
    source: 'microbenchmark',
    mean: round2(summary.mean),
    p50: round2(summary.p50),
    p95: round2(summary.p95),
    stdev: round2(summary.stdev),
    sampleCount: summary.sampleCount,
    confidence: latencyConfidence(summary),
  };
  if (calibration && calibration.smClockHz > 0) value.meanNs = round2((summary.mean / calibration.smClockHz) * 1e9);
  return value;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
