/**
 * The calibration bench in small (npm run bench:calibration runs hundreds
 * on the real-sized models): seeded discoveries on the H100 with an 8 MiB L2
 * (a sixth of the L2 to walk, the same checks and confidence rules) with
 * another tenant, each value held against the model's truth. No value that
 * differs from the truth may carry a confidence of 0.9 or more; with no
 * tenant every value is right.
 */
import { describe, expect, it } from 'vitest';
import { CALIBRATION_STRATEGIES, calibrationRun, SURE_CONFIDENCE } from '../../../bench/calibration-run.js';
import type { TruthCheck } from '../../../server/gpu/sim/truth.js';

const SEEDS = [1700, 1701, 1702, 1703];
const MODEL = 'h100-l2-8mib';
const BUSY = 0.1;

async function checksAt(intensity: number): Promise<TruthCheck[]> {
  const checks: TruthCheck[] = [];
  for (const seed of SEEDS)
    checks.push(...(await calibrationRun({ modelId: MODEL, seed, intensity, strategies: CALIBRATION_STRATEGIES, thread: true })).checks);
  return checks;
}

const describeText = (check: TruthCheck) => `${check.path} = ${check.value} (truth ${check.truth}) at ${check.confidence}`;

describe(`calibrated confidence on the simulated H100 (${MODEL})`, () => {
  it('with no tenant, recovers every value', async () => {
    const checks = await checksAt(0);
    expect(checks.length).toBeGreaterThanOrEqual(14 * SEEDS.length);
    expect(checks.filter((check) => !check.correct).map(describeText)).toEqual([]);
  }, 600_000);

  it(`with a tenant at intensity ${BUSY}, gets values wrong, and none of them at confidence ${SURE_CONFIDENCE} or more`, async () => {
    const checks = await checksAt(BUSY);
    const wrong = checks.filter((check) => !check.correct);
    expect(wrong.length).toBeGreaterThan(0);
    expect(wrong.filter((check) => check.confidence >= SURE_CONFIDENCE).map(describeText)).toEqual([]);
  }, 600_000);
});
