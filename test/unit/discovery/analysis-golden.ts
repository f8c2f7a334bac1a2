/**
 * The analysis golden: what every strategy's build made of every recorded
 * H100 run (recorded-h100-runs.ts) when the golden was recorded, as JSON
 * stores it. Builds, not reanalyse's merged outcome: every analysed value of
 * the document comes from a build, and the golden stays independent of how
 * reanalyse merges and checks them. A faster analysis must give exactly
 * this; a change of value is a new ANALYSIS_VERSION and a re-recorded golden
 * (`npx tsx test/unit/discovery/record-analysis-golden.ts`).
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { STRATEGIES } from '../../../server/discovery/index.js';
import type { CalibrateResult, HelloResult } from '../../../server/protocol/ops.js';
import type { RawSeries } from '../../../server/model/document.js';

export const GOLDEN_URL = new URL('./fixtures/analysis-golden.json.gz', import.meta.url);

/** Each strategy that recorded series in the run, in registry order, with its build as JSON stores it. */
export type AnalysedBuilds = Array<{ strategy: string; build: unknown }>;

export interface AnalysisGolden {
  analysisVersion: string;
  recordedAt: string;
  runs: Array<{ label: string; builds: AnalysedBuilds }>;
}

export function analysedBuilds(raw: readonly RawSeries[]): AnalysedBuilds {
  const device = (raw.find((series) => series.op === 'hello')?.result as HelloResult | undefined)?.devices[0];
  if (!device) throw new Error('the run has no hello series with a device');
  const calibration = (raw.find((series) => series.op === 'calibrate')?.result as CalibrateResult | undefined) ?? null;
  return STRATEGIES.filter((strategy) => raw.some((series) => strategy.ownsSeries(series.name))).map((strategy) => ({
    strategy: strategy.name,
    build: JSON.parse(JSON.stringify(strategy.build(raw, device, calibration))) as unknown,
  }));
}

export function readAnalysisGolden(): AnalysisGolden {
  return JSON.parse(gunzipSync(readFileSync(GOLDEN_URL)).toString('utf8')) as AnalysisGolden;
}
