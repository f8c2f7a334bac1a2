export { concatSamples } from './samples.js';
export { EmptySampleError, mean, median, percentile, percentileOfSorted, sortedAscending, sortedCopy, stdev } from './descriptive.js';
export { dropOutliersIqr, dropOutliersMad, mad, summarizeLatency, trimmedMean, type LatencySummary } from './robust.js';
export { ksCriticalValue, ksPValue, ksStatistic, ksTest, type KsTest } from './kolmogorov-smirnov.js';
export {
  detectSizeChangePoint,
  slowThreshold,
  stepFitIndex,
  type ChangePointFound,
  type ChangePointMissing,
  type ChangePointOptions,
  type ChangePointResult,
  type SweepPoint,
} from './change-point.js';
export { changePointConfidence, combineConfidences, latencyConfidence, type ChangePointEvidence } from './confidence.js';
export { fewestSlowPlacement, type PlacedSweepPoint } from './placements.js';
export { expectedHitShare, fitFetchGranularity, hitShare, type GranularityResult, type StridePoint } from './granularity.js';
export { detectLineSize, largestPowerOfTwoAtMost, lineSizeStrides, type LineSizePoint, type LineSizeResult } from './line-size.js';
export {
  bestBandwidthPoint,
  bytesPerSecond,
  describeGeometry,
  repetitionConfidence,
  searchBandwidth,
  DEFAULT_MIN_GAIN,
  type BandwidthGeometry,
  type BandwidthPoint,
  type BandwidthSearch,
  type BandwidthSearchPlan,
} from './bandwidth.js';
