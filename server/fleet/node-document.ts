/** Builds the node document (GET /v1/node) from the served GPU documents and the latest NVML snapshot. Pure but for the host name. */
import { hostname } from 'node:os';
import type { DynamicSnapshot } from '../dynamic/types.js';
import type { TopologyApi } from '../model/topology-api.js';
import { nodeAgreement } from './agreement.js';
import { readGpuFacts } from './gpu-documents.js';
import { gpuLinks } from './links.js';
import type { NodeDocument } from '../model/node-schema.js';

export function buildNodeDocument(
  topology: Pick<TopologyApi, 'listGpus' | 'getTopology'>,
  snapshot: DynamicSnapshot | null,
  host: string = hostname(),
): NodeDocument {
  const gpus = readGpuFacts(topology);
  const agreement = nodeAgreement(gpus);
  return {
    host,
    gpus: gpus.map((g) => ({
      uuid: g.uuid,
      index: g.index,
      name: g.name,
      pciBusId: g.pciBusId,
      numaNode: g.numaNode ?? snapshot?.devices.find((d) => d.uuid === g.uuid)?.numaNode ?? null,
      simulated: g.simulated,
      probeStatus: g.probeStatus,
      measured: g.measured !== null,
      resultFinishedAt: g.measured?.resultMeasuredAt ?? null,
      topologyUrl: `/v1/gpus/${encodeURIComponent(g.uuid)}/topology`,
    })),
    agreement: {
      agree: agreement.agree,
      models: agreement.models.map((m) => ({
        ...m,
        differences: m.differences.map((d) => ({ ...d, spread: Number.isFinite(d.spread) ? d.spread : Number.MAX_VALUE })),
      })),
    },
    links: gpuLinks(snapshot),
    nvml: snapshot
      ? { available: snapshot.available, reason: snapshot.reason, readAt: snapshot.readAt }
      : { available: false, reason: 'NVML has not been read yet', readAt: null },
  };
}
