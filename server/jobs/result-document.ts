import type { GpuIdentity } from '../model/gpu.js';
import type { DiscoveryOutcome, ElementName, ResultDocument } from '../model/document.js';

export interface ResultMeta {
  gpu: GpuIdentity;
  simulated: boolean;
  probeVersion: string;
  analysisVersion: string;
  jobId: string;
  only: ElementName[] | null;
  startedAt: Date;
  finishedAt: Date;
  /** Set when a newer analysis rebuilt the result from a stored one's raw series. */
  reanalysedFrom?: { resultId: number; analysisVersion: string };
}

/**
 * The immutable document stored for one probe. A partial probe's outcome
 * already covers the elements it did not re-measure (completeOutcome); only
 * results stored before raw series were carried over lack their series, and
 * for those the previous document's elements are kept as they were.
 */
export function buildResultDocument(outcome: DiscoveryOutcome, meta: ResultMeta, previous: ResultDocument | null): ResultDocument {
  const carried = meta.only && previous ? previous.elements : {};
  return {
    schemaVersion: 2,
    gpu: { uuid: meta.gpu.uuid, name: meta.gpu.name, vendor: meta.gpu.vendor, pciBusId: meta.gpu.pciBusId },
    simulated: meta.simulated,
    probe: {
      probeVersion: meta.probeVersion,
      analysisVersion: meta.analysisVersion,
      driverVersion: meta.gpu.driverVersion,
      startedAt: meta.startedAt.toISOString(),
      finishedAt: meta.finishedAt.toISOString(),
      durationMs: meta.finishedAt.getTime() - meta.startedAt.getTime(),
      jobId: meta.jobId,
      only: meta.only,
      ...(meta.reanalysedFrom ? { reanalysedFrom: meta.reanalysedFrom } : {}),
    },
    device: outcome.device,
    clock: outcome.clock ?? previous?.clock ?? null,
    elements: { ...carried, ...outcome.elements },
    warnings: outcome.warnings,
  };
}
