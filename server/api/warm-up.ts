/**
 * The first answer of each kind runs code V8 has not compiled yet (fastify's
 * request path, the problem renderer, the serialisers, the metrics render):
 * 2-4 ms more than the next one, on the event loop. Answered for real, those
 * first answers fall just after the port is bound, as boot lists the GPUs and
 * starts the first probe, and together they were the slowest answers of
 * issue 17.5's bench on the H100. These requests, injected before the port is
 * bound, pay for that compilation instead. Being reads they log at debug
 * only, and the HTTP metrics forget them.
 */
import type { FastifyInstance } from 'fastify';

/** One of each kind a poller starts with; GPU routes answer 503 here (boot has not listed the GPUs yet). */
const WARM_UP_URLS = ['/healthz', '/readyz', '/v1/gpus', '/v1/gpus/0/topology', '/v1/jobs?limit=1', '/metrics'] as const;

export async function warmUpRequests(app: FastifyInstance): Promise<void> {
  for (const url of WARM_UP_URLS) await app.inject({ method: 'GET', url });
  app.metrics.httpDuration.reset();
}
