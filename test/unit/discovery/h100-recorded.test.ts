/**
 * Re-analysis of a real H100 probe (the daemon's first probe on the GPU
 * machine, raw series and document as stored; metadata says which analysis
 * made the document). Physics always; the stored document only while the
 * analysis is the one that made it (recorded-h100.ts).
 */
import { readFileSync } from 'node:fs';
import type { DiscoveryOutcome, RawSeries } from '../../../server/model/document.js';
import { describeRecordedH100 } from './recorded-h100.js';

const fixture = JSON.parse(readFileSync('test/fixtures/h100/discovery-run.json', 'utf8')) as {
  metadata: Record<string, string>;
  raw: RawSeries[];
  document: { elements: DiscoveryOutcome['elements'] };
};

describeRecordedH100({
  label: `the recorded ${fixture.metadata.gpu} probe (${fixture.metadata.recordedAt}, driver ${fixture.metadata.driverVersion})`,
  raw: fixture.raw,
  storedElements: fixture.document.elements,
  analysisVersion: fixture.metadata.analysisVersion ?? null,
});
