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
}

/**
 * The immutable document stored for one probe. A partial probe (`only`)
 * carries the other elements over from the previous result for the same key,
 * so a re-probe of L1 does not forget L2.
 */
export function buildResultDocument(outcome: DiscoveryOutcome, meta: ResultMeta, previous: ResultDocument | null): ResultDocument {
  const carried = meta.only && previous ? previous.elements : {};
  return {
    schemaVersion: 1,
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
    },
    device: outcome.device,
    clock: outcome.clock ?? previous?.clock ?? null,
    elements: { ...carried, ...outcome.elements },
    warnings: outcome.warnings,
  };
}
