import { median } from './descriptive.js';

/**
 * Streaming bandwidth from event-timed launches, and the search for the launch
 * geometry that reaches a memory level's peak. MT4G times one fixed launch
 * and lands about 20 % under known figures: one pass over an L2-sized array
 * is bound by the launch, too few threads leave too few bytes in flight. The
 * search climbs one axis at a time from the best point so far — passes over
 * the array inside one launch, threads per SM, SMs used — and stops an axis
 * when the next step gains less than `minGain`; every point measured stays in
 * the curve.
 */

/** One launch shape of the bandwidth op. */
export interface BandwidthGeometry {
  blocks: number;
  threadsPerBlock: number;
  /** Passes over the array inside one launch. */
  passes: number;
}

/** A measured geometry: its rate is bytes per launch over the median launch time. */
export interface BandwidthPoint extends BandwidthGeometry {
  bytesPerSecond: number;
}

/** What the search needs to know of the device and the array. */
export interface BandwidthSearchPlan {
  multiprocessorCount: number;
  maxThreadsPerBlock: number;
  maxThreadsPerMultiprocessor: number;
  warpSize: number;
  arrayBytes: number;
  /** Most bytes one launch streams (arrayBytes × passes): bounds the passes axis and the search's GPU time. */
  maxBytesPerLaunch: number;
  maxPasses: number;
  /** A step that gains less than this share ends its axis (and a round that gains less ends the search). */
  minGain: number;
  /** Rounds of the passes and threads axes; a round after the first runs only when the one before gained minGain. */
  maxRounds: number;
}

export const DEFAULT_MIN_GAIN = 0.02;
/**
 * Steps in a row without a minGain gain that end the passes axis. Each
 * doubling of passes gains what the launch overhead still costs (the new
 * point's share of overhead), so near the overhead-bound knee the gain is a
 * few % against launch noise of about as much: one noisy step ended the axis
 * 5–9 % under the level's rate in ~0.5 % of simulated searches.
 */
export const PASSES_PATIENCE = 2;

export interface BandwidthSearch {
  best: BandwidthPoint;
  /** Every point measured, in the order measured. */
  curve: BandwidthPoint[];
}

/** Bytes per second from the bytes one repetition moves and each repetition's seconds (their median: one slow launch does not move it). */
export function bytesPerSecond(bytes: number, seconds: readonly number[]): number {
  const typical = median(seconds);
  if (!(typical > 0)) throw new RangeError(`bandwidth needs positive seconds, got a median of ${typical}`);
  return bytes / typical;
}

/** How far a repetition strayed from the median launch time, as a 0..1 confidence (1: every repetition took the same time). */
export function repetitionConfidence(seconds: readonly number[]): number {
  const typical = median(seconds);
  const spread = (Math.max(...seconds) - Math.min(...seconds)) / typical;
  return Math.max(0, Math.min(1, 1 - spread));
}

/** The fastest point (the first of equals), or null for none. */
export function bestBandwidthPoint<T extends BandwidthPoint>(points: readonly T[]): T | null {
  let best: T | null = null;
  for (const point of points) if (!best || point.bytesPerSecond > best.bytesPerSecond) best = point;
  return best;
}

/** SMs a launch occupies and the blocks each takes, blocks dealt breadth-first (one per SM before a second on any). */
export function occupancy(
  geometry: Pick<BandwidthGeometry, 'blocks'>,
  multiprocessorCount: number,
): { smsUsed: number; blocksPerSm: number } {
  return { smsUsed: Math.min(geometry.blocks, multiprocessorCount), blocksPerSm: Math.ceil(geometry.blocks / multiprocessorCount) };
}

/** "132 SMs × 2 blocks × 1024 threads, 64 passes per launch". */
export function describeGeometry(geometry: BandwidthGeometry, multiprocessorCount: number): string {
  const { smsUsed, blocksPerSm } = occupancy(geometry, multiprocessorCount);
  const blocks = blocksPerSm === 1 ? '1 block' : `${blocksPerSm} blocks`;
  const passes = geometry.passes === 1 ? '1 pass' : `${geometry.passes} passes`;
  return `${smsUsed} SMs × ${blocks} × ${geometry.threadsPerBlock} threads, ${passes} per launch`;
}

/** Threads of one SM as blocks of at most maxThreadsPerBlock, on every SM. */
function threadsPerSmGeometry(plan: BandwidthSearchPlan, threadsPerSm: number, passes: number): BandwidthGeometry {
  const threadsPerBlock = Math.min(threadsPerSm, plan.maxThreadsPerBlock);
  return { blocks: plan.multiprocessorCount * Math.max(1, Math.floor(threadsPerSm / threadsPerBlock)), threadsPerBlock, passes };
}

/** Where the search starts: every SM full (maxThreadsPerMultiprocessor threads), one pass. */
export function startGeometry(plan: BandwidthSearchPlan): BandwidthGeometry {
  return threadsPerSmGeometry(plan, Math.max(plan.maxThreadsPerBlock, plan.maxThreadsPerMultiprocessor), 1);
}

/** The most passes one launch may make of the array. */
export function passesLimit(plan: BandwidthSearchPlan): number {
  return Math.max(1, Math.min(plan.maxPasses, Math.floor(plan.maxBytesPerLaunch / plan.arrayBytes)));
}

/** The passes axis from `from`'s shape: 1, 2, 4, … up to the limit. */
export function passesAxis(plan: BandwidthSearchPlan, from: BandwidthGeometry): BandwidthGeometry[] {
  const axis: BandwidthGeometry[] = [];
  for (let passes = 1; passes <= passesLimit(plan); passes *= 2) axis.push({ ...from, passes });
  return axis;
}

/** The threads-per-SM axis at `from`'s passes: four warps, doubling, up to a full SM. */
export function threadsAxis(plan: BandwidthSearchPlan, from: BandwidthGeometry): BandwidthGeometry[] {
  const most = Math.max(plan.maxThreadsPerBlock, plan.maxThreadsPerMultiprocessor);
  const axis: BandwidthGeometry[] = [];
  for (let threads = Math.min(4 * plan.warpSize, most); threads <= most; threads *= 2)
    axis.push(threadsPerSmGeometry(plan, threads, from.passes));
  return axis;
}

/** The SMs-used axis at `from`'s block size and passes, one block per SM: an eighth, a quarter and half of the SMs (the curve of how many SMs the level takes). */
export function smsAxis(plan: BandwidthSearchPlan, from: BandwidthGeometry): BandwidthGeometry[] {
  const counts = [8, 4, 2].map((share) => Math.max(1, Math.ceil(plan.multiprocessorCount / share)));
  return [...new Set(counts)]
    .filter((sms) => sms < plan.multiprocessorCount)
    .map((blocks) => ({ blocks, threadsPerBlock: from.threadsPerBlock, passes: from.passes }));
}

/** Whether a step from `previous` to `next` gained at least minGain (the axis goes on). */
export function gained(previous: number, next: number, minGain: number): boolean {
  return next >= previous * (1 + minGain);
}

const keyOf = (g: BandwidthGeometry) => `${g.blocks}/${g.threadsPerBlock}/${g.passes}`;

/**
 * Climbs the axes with `measure` (bytes per second of one geometry): passes,
 * then threads per SM, from the best point so far, each axis ending at the
 * first step that gains less than minGain (passes: PASSES_PATIENCE in a row); again while a round gains
 * minGain (up to maxRounds); then the SMs-used axis for the curve. A geometry
 * is measured once.
 */
export async function searchBandwidth(
  plan: BandwidthSearchPlan,
  measure: (geometry: BandwidthGeometry) => Promise<number>,
): Promise<BandwidthSearch> {
  const curve: BandwidthPoint[] = [];
  const seen = new Map<string, BandwidthPoint>();
  const at = async (geometry: BandwidthGeometry): Promise<BandwidthPoint> => {
    const known = seen.get(keyOf(geometry));
    if (known) return known;
    const point = { ...geometry, bytesPerSecond: await measure(geometry) };
    seen.set(keyOf(geometry), point);
    curve.push(point);
    return point;
  };
  const best = () => bestBandwidthPoint(curve)!;
  /** Measures an axis in order until `patience` steps in a row gain less than minGain over the axis's best so far. */
  const climb = async (axis: BandwidthGeometry[], patience = 1) => {
    let top: number | null = null;
    let misses = 0;
    for (const geometry of axis) {
      const { bytesPerSecond: rate } = await at(geometry);
      if (top === null || gained(top, rate, plan.minGain)) misses = 0;
      else if (++misses >= patience) return;
      top = top === null ? rate : Math.max(top, rate);
    }
  };

  await at(startGeometry(plan));
  for (let round = 0; round < plan.maxRounds; round += 1) {
    const before = best().bytesPerSecond;
    // Later rounds climb the passes axis from the best point's passes up (fewer were measured on the first round's shape).
    const from = best();
    await climb(
      passesAxis(plan, from).filter((geometry) => round === 0 || geometry.passes >= from.passes),
      PASSES_PATIENCE,
    );
    await climb(threadsAxis(plan, best()));
    if (!gained(before, best().bytesPerSecond, plan.minGain)) break;
  }
  for (const geometry of smsAxis(plan, best())) await at(geometry);
  return { best: best(), curve };
}
