/**
 * GET /metrics — Prometheus text exposition (server/faces/metrics.ts). Wrapped
 * with fastify-plugin so its onResponse hook times every route of the app,
 * labelled by route template (bounded), never by the raw URL.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import fp from 'fastify-plugin';
import { TopodMetrics, type PollSource } from '../faces/metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: TopodMetrics;
  }
}

export interface MetricsRoutesOptions {
  poller?: PollSource | null;
  /** The `Hostname` label (dcgm-exporter's); default the host name. */
  hostname?: string;
}

const ExpositionSchema = Type.String({
  description:
    "Prometheus text format 0.0.4. Series per GPU (dcgm-exporter's labels gpu, UUID, pci_bus_id, device, modelName, Hostname, DCGM_FI_DRIVER_VERSION) and per MIG GPU instance (plus GPU_I_ID, GPU_I_PROFILE): " +
    'topod_element_{bytes,cycles,bytes_per_second,instances}{element,attribute}, bounds as topod_element_bound_<unit>{bound}, topod_element_latency_cycles{statistic}, topod_element_confidence_ratio, ' +
    'topod_mig_l2_share_bytes, topod_result_age_seconds, topod_result_stale, topod_probe_job_duration_seconds, topod_nvml_poll_duration_seconds, topod_http_request_duration_seconds',
});

const metricsRoutes: FastifyPluginAsyncTypebox<MetricsRoutesOptions> = async (app, options) => {
  const metrics = new TopodMetrics({
    topology: app.topology,
    poller: options.poller ?? null,
    ...(options.hostname === undefined ? {} : { hostname: options.hostname }),
  });
  app.decorate('metrics', metrics);
  app.addHook('onClose', async () => metrics.close());
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpDuration.observe({ method: request.method, route, status_code: String(reply.statusCode) }, reply.elapsedTime / 1000);
    done();
  });

  app.get(
    '/metrics',
    {
      schema: {
        tags: ['metrics'],
        operationId: 'getMetrics',
        summary: 'Prometheus metrics: measured topology, MIG L2 shares, probe jobs, NVML polling, HTTP',
        description:
          'Series are rebuilt at every scrape from the documents served now: a GPU or MIG instance that is gone leaves no stale series.',
        response: { 200: { description: 'Prometheus text exposition', content: { 'text/plain': { schema: ExpositionSchema } } } },
      },
    },
    async (_request, reply) => {
      const body = await metrics.render();
      return reply.type(metrics.contentType).send(body);
    },
  );
};

export default fp(metricsRoutes, { name: 'topod-metrics', dependencies: ['topod-topology'] });
