import { detectSizeChangePoint, type ChangePointFound, type ChangePointResult, type SweepPoint } from '../analysis/index.js';
import { geometricSizes, linearSizes } from './sizes.js';

/**
 * Coarse-to-fine search for the size where a cache stops holding the array
 * (MT4G §IV-B workflow): a geometric sweep brackets the change point (widened
 * when it sits at an edge or is missing), then linear sweeps around the
 * bracket narrow it. A real L2 sweep stays at a few dozen sizes this way.
 */

export interface SizeSearchPlan {
  /** Raw series prefix, e.g. "l1.size": rounds are recorded as "<name>.coarse", "<name>.refine.1", … */
  name: string;
  lowBytes: number;
  highBytes: number;
  pointsPerOctave: number;
  refinePoints: number;
  refineRounds: number;
  alignBytes: number;
  /** Limits for widening the coarse range. */
  minBytes: number;
  maxBytes: number;
  maxWidenings: number;
}

/** Measures the sizes and returns the sweep recorded under `seriesName`. */
export type SweepRunner = (seriesName: string, sizes: number[]) => Promise<SweepPoint[]>;

/** Below this confidence a search measures its last round again (other placements of every array) before settling. */
export const RETRY_BELOW_CONFIDENCE = 0.9;
const MAX_RETRIES = 2;

/**
 * `evaluate` scores the whole search as recorded so far (sweep-series.ts:
 * every round merged); while that stays below RETRY_BELOW_CONFIDENCE, the
 * last round's sizes are measured again under its own name, in another
 * order so every array lands elsewhere: a capacity miss shows at every
 * placement, a conflict miss of the set hash only at some, and
 * fewestSlowPlacement keeps the cleanest (thesis §4: repeat, do not trust one
 * placement).
 */
export async function searchSize(
  run: SweepRunner,
  plan: SizeSearchPlan,
  onRound?: (round: string) => void,
  evaluate?: () => ChangePointResult | null,
): Promise<ChangePointResult> {
  const { result, lastRound } = await searchRounds(run, plan, onRound);
  if (!evaluate || !result.found) return result;
  for (let retry = 1; retry <= MAX_RETRIES; retry += 1) {
    const scored = evaluate();
    if (!scored?.found || scored.confidence >= RETRY_BELOW_CONFIDENCE) return scored ?? result;
    await run(lastRound.name, rotated(lastRound.sizes, retry));
    onRound?.(`${lastRound.name}.retry.${retry}`);
  }
  return evaluate() ?? result;
}

/** The sizes starting `turn` thirds of the way in: a new allocation order. */
function rotated(sizes: readonly number[], turn: number): number[] {
  const at = Math.floor((sizes.length * turn) / 3) % Math.max(1, sizes.length);
  return [...sizes.slice(at), ...sizes.slice(0, at)];
}

async function searchRounds(
  run: SweepRunner,
  plan: SizeSearchPlan,
  onRound?: (round: string) => void,
): Promise<{ result: ChangePointResult; lastRound: { name: string; sizes: number[] } }> {
  let low = plan.lowBytes;
  let high = plan.highBytes;
  let result: ChangePointResult = { found: false, reason: 'not measured', slowShares: [] };
  let lastRound = { name: `${plan.name}.coarse`, sizes: [] as number[] };
  for (let attempt = 0; attempt <= plan.maxWidenings; attempt += 1) {
    lastRound = {
      name: attempt === 0 ? `${plan.name}.coarse` : `${plan.name}.coarse.${attempt + 1}`,
      sizes: geometricSizes(low, high, plan.pointsPerOctave, plan.alignBytes),
    };
    result = detectSizeChangePoint(await run(lastRound.name, lastRound.sizes));
    onRound?.(lastRound.name);
    if (result.found && result.edge === null) break;
    const widened = widen(result, low, high, plan);
    if (widened[0] === low && widened[1] === high) break;
    [low, high] = widened;
  }
  if (!result.found) return { result, lastRound };

  let best: ChangePointFound = result;
  for (let round = 1; round <= plan.refineRounds; round += 1) {
    const width = best.firstAboveBytes - best.lastBelowBytes;
    if (width <= 2 * plan.alignBytes) break;
    const from = Math.max(plan.alignBytes, best.lastBelowBytes - width / 2);
    const candidate = {
      name: `${plan.name}.refine.${round}`,
      sizes: linearSizes(from, best.firstAboveBytes + width / 2, plan.refinePoints, plan.alignBytes),
    };
    const refined = detectSizeChangePoint(await run(candidate.name, candidate.sizes));
    onRound?.(candidate.name);
    lastRound = candidate;
    if (!refined.found) break;
    best = refined;
  }
  return { result: best, lastRound };
}

/** Missing change point: look both ways; one at an edge: look past that edge. */
function widen(result: ChangePointResult, low: number, high: number, plan: SizeSearchPlan): [number, number] {
  const lower = Math.max(plan.minBytes, low / 4);
  const higher = Math.min(plan.maxBytes, high * 4);
  if (!result.found) return [lower, higher];
  return result.edge === 'lower' ? [lower, high] : [low, higher];
}
