import type { ProbeConditions } from '../model/conditions-schema.js';
import type { GpuIdentity } from '../model/gpu.js';
import { busyWarning, capBusyConfidence } from './busy-confidence.js';
import {
  DOCUMENT_SCHEMA_VERSION,
  type DiscoveryOutcome,
  type ElementName,
  type ElementTopology,
  type ProbeTarget,
  type ResultDocument,
} from '../model/document.js';

export interface ResultMeta {
  gpu: GpuIdentity;
  simulated: boolean;
  probeVersion: string;
  analysisVersion: string;
  jobId: string;
  only: ProbeTarget[] | null;
  startedAt: Date;
  finishedAt: Date;
  /** What NVML saw before and during the probe (a re-analysis keeps the source's). */
  conditions?: ProbeConditions;
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
  const elements: Partial<Record<ElementName, ElementTopology>> = { ...carried, ...outcome.elements };
  // A re-analysis keeps the conditions its source was measured under.
  const conditions: ProbeConditions | undefined = meta.conditions ?? (meta.reanalysedFrom ? previous?.conditions : undefined);
  const busyProbeStart = conditions?.probedWhileBusy
    ? meta.reanalysedFrom
      ? previous?.probe.startedAt
      : meta.startedAt.toISOString()
    : undefined;
  for (const [name, element] of Object.entries(elements) as Array<[ElementName, ElementTopology]>) {
    const at = measuredAt(name, meta, previous);
    // Only what the busy probe itself measured: a partial probe's carried-over elements were measured before it.
    elements[name] = { ...(at === busyProbeStart ? capBusyConfidence(element) : element), measuredAt: at };
  }
  return {
    schemaVersion: DOCUMENT_SCHEMA_VERSION,
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
    carveout: outcome.carveout ?? (meta.only ? (previous?.carveout ?? null) : null),
    compute: outcome.compute ?? (meta.only ? (previous?.compute ?? null) : null),
    // Opt-in: a probe that did not measure it (a full probe too) keeps the previous one.
    ...(outcome.traffic || previous?.traffic ? { traffic: outcome.traffic ?? previous?.traffic ?? null } : {}),
    elements,
    ...(conditions ? { conditions } : {}),
    warnings: conditions?.probedWhileBusy ? [...outcome.warnings, busyWarning(conditions)] : outcome.warnings,
  };
}

/**
 * When an element was measured: this probe's start for what it re-measured;
 * for elements a partial probe carried over, and for every element of a
 * re-analysed result, the time the earlier document gave it (or that
 * document's probe start, for documents older than the field).
 */
function measuredAt(name: ElementName, meta: ResultMeta, previous: ResultDocument | null): string {
  const remeasured = !meta.reanalysedFrom && (meta.only === null || meta.only.includes(name));
  if (remeasured || !previous) return meta.startedAt.toISOString();
  return previous.elements[name]?.measuredAt ?? previous.probe.startedAt;
}
