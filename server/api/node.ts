/** GET /v1/node: the node's GPUs, their agreement and the links between them (server/fleet). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { DynamicSnapshot } from '../dynamic/types.js';
import { buildNodeDocument } from '../fleet/node-document.js';
import { NodeDocumentSchema } from '../fleet/node-schema.js';
import { jsonResponse } from './schemas/common.js';

/** Where live NVML state comes from: the daemon's poller (a snapshot per read). */
export interface NodeSnapshotSource {
  on(event: 'snapshot', listener: (snapshot: DynamicSnapshot) => void): unknown;
  off(event: 'snapshot', listener: (snapshot: DynamicSnapshot) => void): unknown;
  readonly current?: DynamicSnapshot | null;
}

export interface NodeRoutesOptions {
  nvml?: NodeSnapshotSource | null;
}

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

  app.get(
    '/node',
    {
      schema: {
        tags: ['topology'],
        operationId: 'getNode',
        summary: 'The node: its GPUs, whether same-model GPUs measured alike, and the links between GPUs (nvidia-smi topo -m)',
        response: { 200: jsonResponse('the node document', NodeDocumentSchema) },
      },
    },
    async () => buildNodeDocument(app.topology, latest ?? source?.current ?? null),
  );
};

export default nodeRoutes;
