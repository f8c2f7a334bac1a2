/**
 * The analysis of every recorded H100 run gives exactly the document the
 * golden holds (analysis-golden.ts): work on the analysis's speed must not
 * move a value, a confidence or a warning.
 */
import { describe, expect, it } from 'vitest';
import { ANALYSIS_VERSION } from '../../../server/discovery/index.js';
import { analysedOutcome, readAnalysisGolden } from './analysis-golden.js';
import { recordedH100Runs } from './recorded-h100-runs.js';

const golden = readAnalysisGolden();
const runs = recordedH100Runs();

describe('the analysis of the recorded H100 runs', () => {
  it(`was recorded by the current analysis (${ANALYSIS_VERSION}), for every recorded run`, () => {
    expect(golden.analysisVersion).toBe(ANALYSIS_VERSION);
    expect(golden.runs.map((run) => run.label)).toEqual(runs.map((run) => run.label));
  });

  for (const [i, run] of runs.entries()) {
    it(`gives exactly the golden document for ${run.label}`, () => {
      const outcome = analysedOutcome(run.raw);
      // Each run builds something (the compute recordings build no element, only the compute section).
      expect(Object.keys(outcome.elements).length > 0 || outcome.compute !== undefined).toBe(true);
      expect(outcome).toEqual(golden.runs[i]!.outcome);
    });
  }
});
