/**
 * The analysis golden: what `reanalyse` made of every recorded H100 run
 * (recorded-h100-runs.ts) when the golden was recorded, as the document
 * stores it (JSON). A faster analysis must give exactly this; a change of
 * value is a new ANALYSIS_VERSION and a re-recorded golden
 * (`npx tsx test/unit/discovery/record-analysis-golden.ts`).
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { reanalyse } from '../../../server/discovery/index.js';
import type { DiscoveryOutcome } from '../../../server/model/document.js';

export const GOLDEN_URL = new URL('./fixtures/analysis-golden.json.gz', import.meta.url);

/** The outcome without what reanalyse copies from its input (raw series, device properties), as JSON stores it. */
export type AnalysedOutcome = Omit<DiscoveryOutcome, 'raw' | 'device'>;

export interface AnalysisGolden {
  analysisVersion: string;
  recordedAt: string;
  runs: Array<{ label: string; outcome: AnalysedOutcome }>;
}

export function analysedOutcome(raw: DiscoveryOutcome['raw']): AnalysedOutcome {
  const { raw: _raw, device: _device, ...analysed } = reanalyse(raw);
  return JSON.parse(JSON.stringify(analysed)) as AnalysedOutcome;
}

export function readAnalysisGolden(): AnalysisGolden {
  return JSON.parse(gunzipSync(readFileSync(GOLDEN_URL)).toString('utf8')) as AnalysisGolden;
}
