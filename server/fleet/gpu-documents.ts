/**
 * The node's GPUs with their served documents, read generically: the fleet
 * faces (NFD labels, the node document) use a handful of attributes and must
 * not break when the document grows new elements or fields. Everything here
 * comes from the TopologyApi, the same seam the routes use.
 */
import type { GpuSummary } from '../model/gpu.js';
import type { TopologyApi } from '../model/topology-api.js';

/** `{ value, unit, … }` as every measured attribute of an element is shaped. */
export interface MeasuredAttribute {
  value: number;
  unit: string;
  [extra: string]: unknown;
}

/** An element (l1, l2, texture, …): its attributes by name, only the measured-value ones kept. */
export type ElementAttributes = Record<string, MeasuredAttribute>;

export interface MigProfileShare {
  /** "1g.10gb", "1g.10gb+me": the NVML name without "MIG ". */
  profile: string;
  l2Bytes: number | null;
}

/** What the fleet faces read of one GPU's merged document. */
export interface GpuFacts {
  uuid: string;
  index: number;
  name: string;
  pciBusId: string | null;
  present: boolean;
  simulated: boolean;
  probeStatus: GpuSummary['probe']['status'];
  /** Null when no document is served yet (probe pending, failed, no backend). */
  measured: {
    elements: Record<string, ElementAttributes>;
    computeCapabilityMajor: number | null;
    resultMeasuredAt: string | null;
  } | null;
  /** From the document's MIG view (live NVML state); null without NVML or without MIG. */
  mig: {
    mode: 'enabled' | 'disabled' | null;
    pendingMode: 'enabled' | 'disabled' | null;
    profiles: MigProfileShare[];
    instanceCount: number;
  } | null;
  numaNode: number | null;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const numberOrNull = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const modeName = (value: unknown): 'enabled' | 'disabled' | null => (value === 'enabled' || value === 'disabled' ? value : null);

/** Every element's measured attributes (objects with a numeric `value`), whatever the element and attribute names. */
export function measuredElements(document: Record<string, unknown>): Record<string, ElementAttributes> {
  const out: Record<string, ElementAttributes> = {};
  const elements = document['elements'];
  if (!isRecord(elements)) return out;
  for (const [element, attributes] of Object.entries(elements)) {
    if (!isRecord(attributes)) continue;
    const kept: ElementAttributes = {};
    for (const [name, attribute] of Object.entries(attributes)) {
      if (isRecord(attribute) && numberOrNull(attribute['value']) !== null && typeof attribute['unit'] === 'string')
        kept[name] = attribute as MeasuredAttribute;
    }
    out[element] = kept;
  }
  return out;
}

function migFacts(document: Record<string, unknown>): GpuFacts['mig'] {
  const mig = document['mig'];
  if (!isRecord(mig)) return null;
  const mode = isRecord(mig['mode']) ? mig['mode'] : null;
  const profiles = Array.isArray(mig['profiles']) ? mig['profiles'].filter(isRecord) : [];
  const instances = Array.isArray(mig['instances']) ? mig['instances'] : [];
  return {
    mode: modeName(mode?.['current']),
    pendingMode: modeName(mode?.['pending']),
    profiles: profiles.flatMap((p) => {
      const name = stringOrNull(p['name']);
      if (!name) return [];
      const l2 = isRecord(p['l2']) ? p['l2'] : {};
      return [{ profile: name.replace(/^MIG\s+/, ''), l2Bytes: numberOrNull(l2['bytes']) }];
    }),
    instanceCount: instances.length,
  };
}

/** One GPU's facts from its summary and its served document (parsed JSON, or null). */
export function gpuFacts(summary: GpuSummary, document: Record<string, unknown> | null): GpuFacts {
  const device = document && isRecord(document['device']) ? document['device'] : {};
  const probe = document && isRecord(document['probe']) ? document['probe'] : {};
  const dynamic = document && isRecord(document['dynamic']) && isRecord(document['dynamic']['device']) ? document['dynamic']['device'] : {};
  return {
    uuid: summary.uuid,
    index: summary.index,
    name: summary.name,
    pciBusId: summary.pciBusId,
    present: summary.present,
    simulated: summary.simulated,
    probeStatus: summary.probe.status,
    measured: document
      ? {
          elements: measuredElements(document),
          computeCapabilityMajor: numberOrNull(device['computeCapabilityMajor']),
          resultMeasuredAt: stringOrNull(probe['finishedAt']),
        }
      : null,
    mig: document ? migFacts(document) : null,
    numaNode: numberOrNull(dynamic['numaNode']),
  };
}

/** The present GPUs, in index order, each with what its served document says. */
export function readGpuFacts(topology: Pick<TopologyApi, 'listGpus' | 'getTopology'>): GpuFacts[] {
  return topology
    .listGpus()
    .filter((gpu) => gpu.present)
    .sort((a, b) => a.index - b.index)
    .map((summary) => {
      const lookup = topology.getTopology(summary.uuid);
      let document: Record<string, unknown> | null = null;
      if (lookup.kind === 'ready') {
        const parsed: unknown = JSON.parse(lookup.document.body);
        document = isRecord(parsed) ? parsed : null;
      }
      return gpuFacts(summary, document);
    });
}
