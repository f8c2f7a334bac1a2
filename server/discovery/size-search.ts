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

/** Below this confidence a search measures its last round again (another placement of every array) before settling. */
export const RETRY_BELOW_CONFIDENCE = 0.9;
const MAX_RETRIES = 2;

/**
 * `evaluate` scores the whole search as recorded so far (sweep-series.ts:
 * every round merged); while that stays below RETRY_BELOW_CONFIDENCE, the
 * last round is measured again under its own name, which adds placements
 * that fewestSlowPlacement chooses from.
 */
export async function searchSize(
  run: SweepRunner,
  plan: SizeSearchPlan,
  onRound?: (round: string) => void,
  evaluate?: () => ChangePointResult | null,
): Promise<ChangePointResult> {
  const best = await searchRounds(run, plan, onRound);
  if (!evaluate || !best.found) return best;
  let last = best;
  for (let retry = 1; retry <= MAX_RETRIES; retry += 1) {
    const scored = evaluate();
    if (!scored?.found || scored.confidence >= RETRY_BELOW_CONFIDENCE) return scored ?? last;
    const name = `${plan.name}.refine.retry.${retry}`;
    const width = Math.max(2 * plan.alignBytes, scored.firstAboveBytes - scored.lastBelowBytes);
    const retried = detectSizeChangePoint(
      await run(name, linearSizes(Math.max(plan.alignBytes, scored.lastBelowBytes - 2 * width), scored.firstAboveBytes + 2 * width, plan.refinePoints, plan.alignBytes)),
    );
    onRound?.(name);
    if (retried.found) last = retried;
  }
  return evaluate() ?? last;
}

async function searchRounds(run: SweepRunner, plan: SizeSearchPlan, onRound?: (round: string) => void): Promise<ChangePointResult> {
  let low = plan.lowBytes;
  let high = plan.highBytes;
  let result: ChangePointResult = { found: false, reason: 'not measured', slowShares: [] };
  for (let attempt = 0; attempt <= plan.maxWidenings; attempt += 1) {
    const name = attempt === 0 ? `${plan.name}.coarse` : `${plan.name}.coarse.${attempt + 1}`;
    result = detectSizeChangePoint(await run(name, geometricSizes(low, high, plan.pointsPerOctave, plan.alignBytes)));
    onRound?.(name);
    if (result.found && result.edge === null) break;
    const widened = widen(result, low, high, plan);
    if (widened[0] === low && widened[1] === high) break;
    [low, high] = widened;
  }
  if (!result.found) return result;

  let best: ChangePointFound = result;
  for (let round = 1; round <= plan.refineRounds; round += 1) {
    const width = best.firstAboveBytes - best.lastBelowBytes;
    if (width <= 2 * plan.alignBytes) break;
    const name = `${plan.name}.refine.${round}`;
    const from = Math.max(plan.alignBytes, best.lastBelowBytes - width / 2);
    const refined = detectSizeChangePoint(await run(name, linearSizes(from, best.firstAboveBytes + width / 2, plan.refinePoints, plan.alignBytes)));
    onRound?.(name);
    if (!refined.found) break;
    best = refined;
  }
  return best;
}

/** Missing change point: look both ways; one at an edge: look past that edge. */
function widen(result: ChangePointResult, low: number, high: number, plan: SizeSearchPlan): [number, number] {
  const lower = Math.max(plan.minBytes, low / 4);
  const higher = Math.min(plan.maxBytes, high * 4);
  if (!result.found) return [lower, higher];
  return result.edge === 'lower' ? [lower, high] : [low, higher];
}
