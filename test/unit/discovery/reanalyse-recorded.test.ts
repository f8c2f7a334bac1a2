/**
 * Raw series a discovery recorded on a real H100 80GB HBM3 (driver
 * 580.159.04, topod-probe, single-placement L1 sweeps) with the elements the
 * live run reported. The file does not say which analysis made those
 * elements (an early one: its L1 reading predates two-placement sizing), so
 * only physics is asserted of today's re-analysis (recorded-h100.ts).
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { reanalyse } from '../../../server/discovery/index.js';
import type { DiscoveryOutcome } from '../../../server/model/document.js';
import { describeRecordedH100 } from './recorded-h100.js';

const recorded = JSON.parse(
  gunzipSync(readFileSync(new URL('./fixtures/h100-80gb-hbm3-l1-l2-run.json.gz', import.meta.url))).toString('utf8'),
) as DiscoveryOutcome & { metadata?: { analysisVersion?: string } };

describeRecordedH100({
  label: 'a recorded H100 discovery (single-placement L1 sweeps)',
  raw: recorded.raw,
  storedElements: recorded.elements,
  analysisVersion: recorded.metadata?.analysisVersion ?? null,
});

describe('re-analysis of single-placement L1 sweeps', () => {
  it('finds every change point inside its sweep (no warnings)', () => {
    expect(reanalyse(recorded.raw).warnings).toEqual([]);
  });
});
