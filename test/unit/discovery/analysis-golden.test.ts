/**
 * Every strategy's build over every recorded H100 run gives exactly what the
 * golden holds (analysis-golden.ts): work on the analysis's speed must not
 * move a value, a confidence or a warning.
 */
import { describe, expect, it } from 'vitest';
import { ANALYSIS_VERSION } from '../../../server/discovery/index.js';
import { analysedBuilds, readAnalysisGolden } from './analysis-golden.js';
import { recordedH100Runs } from './recorded-h100-runs.js';

const golden = readAnalysisGolden();
const runs = recordedH100Runs();

describe('the analysis of the recorded H100 runs', () => {
  it(`was recorded by the current analysis (${ANALYSIS_VERSION}), for every recorded run`, () => {
    expect(golden.analysisVersion).toBe(ANALYSIS_VERSION);
    expect(golden.runs.map((run) => run.label)).toEqual(runs.map((run) => run.label));
  });

  for (const [i, run] of runs.entries()) {
    it(`gives exactly the golden builds for ${run.label}`, () => {
      const builds = analysedBuilds(run.raw);
      expect(builds.length).toBeGreaterThan(0);
      expect(builds).toEqual(golden.runs[i]!.builds);
    });
  }
});
