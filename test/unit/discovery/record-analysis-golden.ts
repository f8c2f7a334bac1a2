/**
 * `npx tsx test/unit/discovery/record-analysis-golden.ts` — records the
 * analysis golden (analysis-golden.ts) from today's analysis. Run it only
 * when ANALYSIS_VERSION changes: the golden is the proof that an analysis
 * made faster still gives the same values.
 */
import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { ANALYSIS_VERSION } from '../../../server/discovery/index.js';
import { analysedBuilds, GOLDEN_URL, type AnalysisGolden } from './analysis-golden.js';
import { recordedH100Runs } from './recorded-h100-runs.js';

const golden: AnalysisGolden = {
  analysisVersion: ANALYSIS_VERSION,
  recordedAt: new Date().toISOString(),
  runs: recordedH100Runs().map(({ label, raw }) => ({ label, builds: analysedBuilds(raw) })),
};
writeFileSync(GOLDEN_URL, gzipSync(JSON.stringify(golden), { level: 9 }));
console.log(`${GOLDEN_URL.pathname}: ${golden.runs.length} runs, analysis ${ANALYSIS_VERSION}`);
