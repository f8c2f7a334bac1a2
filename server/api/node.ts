/**
 * GET /v1/node: the node's GPUs, their agreement and the links between them (server/fleet);
 * with format=hwloc-xml, hwloc's own XML of the host with topod's GPU facts added (server/faces/hwloc-xml.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { DynamicSnapshot } from '../dynamic/types.js';
import { HwlocUnavailableError } from '../errors.js';
import { isMigDocument, lookupDocument } from '../faces/documents.js';
import type { HwlocGpu } from '../faces/hwloc-gpu-info.js';
import { HostHwlocXml, runLstopo } from '../faces/hwloc-lstopo.js';
import { HWLOC_XML_MEDIA_TYPE, hwlocXmlWithGpus } from '../faces/hwloc-xml.js';
import { buildNodeDocument } from '../fleet/node-document.js';
import { NodeDocumentSchema, type NodeDocument } from '../model/node-schema.js';
import { jsonResponse, problemResponse } from '../model/api-schema.js';

/** Where live NVML state comes from: the daemon's poller (a snapshot per read). */
export interface NodeSnapshotSource {
  on(event: 'snapshot', listener: (snapshot: DynamicSnapshot) => void): unknown;
  off(event: 'snapshot', listener: (snapshot: DynamicSnapshot) => void): unknown;
  readonly current?: DynamicSnapshot | null;
}

export interface NodeRoutesOptions {
  nvml?: NodeSnapshotSource | null;
  /** lstopo's environment (config's hwlocEnv); default: the usual binary folders only. */
  hwlocEnv?: Readonly<Record<string, string>>;
}

const DEFAULT_HWLOC_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };

const NODE_FORMATS = ['json', 'hwloc-xml'] as const;

const nodeRoutes: FastifyPluginAsyncTypebox<NodeRoutesOptions> = async (app, options) => {
  const source = options.nvml ?? null;
  let latest: DynamicSnapshot | null = source?.current ?? null;
  const onSnapshot = (snapshot: DynamicSnapshot): void => {
    latest = snapshot;
  };
  if (source) {
    source.on('snapshot', onSnapshot);
    app.addHook('onClose', async () => {
      source.off('snapshot', onSnapshot);
    });
  }
  const hostXml = new HostHwlocXml(() => runLstopo(options.hwlocEnv ?? DEFAULT_HWLOC_ENV));

  /** The node document's GPUs with their served whole-GPU documents, as the hwloc face reads them. */
  const hwlocGpus = (node: NodeDocument): HwlocGpu[] => {
    const summaries = new Map(app.topology.listGpus().map((gpu) => [gpu.uuid, gpu]));
    return node.gpus.map((gpu) => {
      const lookup = lookupDocument(app.topology, gpu.uuid);
      const document = lookup.kind === 'ready' && !isMigDocument(lookup.document) ? lookup.document : null;
      return { ...gpu, vendor: summaries.get(gpu.uuid)?.vendor ?? 'nvidia', document };
    });
  };

  app.get(
    '/node',
    {
      schema: {
        tags: ['topology'],
        operationId: 'getNode',
        summary: 'The node: its GPUs, whether same-model GPUs measured alike, and the links between GPUs (nvidia-smi topo -m)',
        description:
          'format=hwloc-xml answers hwloc’s own XML of the host (lstopo --of xml; read it with lstopo -i) with topod’s measured facts as info attributes (Topod…) on each GPU’s OS device, matched by PCI bus id; a GPU hwloc did not list is added and says so (TopodNote). Needs lstopo on the daemon’s host (501 without it).',
        querystring: Type.Object({
          format: Type.Optional(
            Type.Unsafe<(typeof NODE_FORMATS)[number]>({
              type: 'string',
              enum: [...NODE_FORMATS],
              description: 'json (default): the node document; hwloc-xml: hwloc XML of the host with topod’s GPU facts added',
            }),
          ),
        }),
        response: {
          200: {
            description: 'the node document, or with format=hwloc-xml hwloc XML',
            content: {
              ...jsonResponse('the node document', NodeDocumentSchema).content,
              [HWLOC_XML_MEDIA_TYPE]: { schema: Type.String({ description: 'hwloc 2.x topology XML (lstopo -i reads it)' }) },
            },
          },
          501: problemResponse(
            `format=hwloc-xml on a host without lstopo (${HwlocUnavailableError.code}); the detail says how to install hwloc`,
          ),
        },
      },
    },
    async (request, reply) => {
      const node = buildNodeDocument(app.topology, latest ?? source?.current ?? null);
      if (request.query.format !== 'hwloc-xml') return node;
      const host = await hostXml.get();
      if (host.kind === 'missing') throw new HwlocUnavailableError(host.reason);
      if (host.kind === 'failed') throw new Error(host.reason);
      return reply.type(`${HWLOC_XML_MEDIA_TYPE}; charset=utf-8`).send(hwlocXmlWithGpus(host.xml, hwlocGpus(node)));
    },
  );
};

export default nodeRoutes;
