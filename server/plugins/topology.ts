/** Makes the topology service reachable from routes as `app.topology`. */
import fp from 'fastify-plugin';
import type { TopologyApi } from '../model/topology-api.js';

declare module 'fastify' {
  interface FastifyInstance {
    topology: TopologyApi;
  }
}

export interface TopologyPluginOptions {
  topology: TopologyApi;
}

export default fp<TopologyPluginOptions>(
  async (app, options) => {
    app.decorate('topology', options.topology);
  },
  { name: 'topod-topology' },
);
