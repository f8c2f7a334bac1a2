/**
 * Makes the topology service reachable from routes as `app.topology`, and
 * holds the GPU routes while boot has not listed the GPUs yet.
 */
import fp from 'fastify-plugin';
import { NotReadyError } from '../errors.js';
import type { TopologyApi } from '../model/topology-api.js';

/** The routes that name a GPU or list them: /v1/gpus and everything under it. */
const GPU_ROUTE = /^\/v1\/gpus(\/|$)/;
/** Boot lists the GPUs within milliseconds of binding the port (NVML, then the registry). */
const BOOTING_RETRY_AFTER_SECONDS = 1;

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
    // The port is bound before boot (server/main.ts), so for a moment a GPU that exists is not known: a 404 (or
    // an empty list) would tell a scheduler it is gone. Until boot has listed the GPUs these routes answer 503
    // with Retry-After, as /readyz says not ready.
    app.addHook('onRequest', (request, _reply, done) => {
      if (options.topology.gpusEnumerated || !GPU_ROUTE.test(request.routeOptions.url ?? '')) return done();
      done(
        new NotReadyError('topod is starting and has not listed its GPUs yet; retry in a second.', {
          headers: { 'retry-after': String(BOOTING_RETRY_AFTER_SECONDS) },
        }),
      );
    });
  },
  { name: 'topod-topology' },
);
