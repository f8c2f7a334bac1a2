/**
 * Limits that keep one client from exhausting the daemon: request and header
 * timeouts on the HTTP server (slow clients trickling headers or a body are
 * cut off with a 408), a connection cap where idle connections make room
 * (connection-guard.ts), a cap on open event streams (503 problem beyond),
 * and a per-address rate limit on mutating requests (@fastify/rate-limit,
 * 429 problem beyond). Reads are never rate-limited: schedulers poll.
 *
 * Node looks for requests past their timeouts every
 * `connectionsCheckingInterval` (30 s by default, which let a slowloris
 * request live 24 s against a documented 10 s); app.ts creates the server
 * with TIMEOUT_CHECK_MS instead, so a limit holds within half a second.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { RateLimitedError, TooManyStreamsError } from '../errors.js';
import { ConnectionGuard } from './connection-guard.js';

export type ConnectionLimits = Pick<Config, 'rateLimitPerMinute' | 'maxConnections' | 'maxEventStreams' | 'requestTimeoutMs'>;

/** The defaults config.ts gives; buildApp callers that pass no limits (tests) get these. */
export const DEFAULT_LIMITS: ConnectionLimits = {
  rateLimitPerMinute: 60,
  maxConnections: 1024,
  maxEventStreams: 256,
  requestTimeoutMs: 30_000,
};

/** Headers must arrive within this, or the request timeout if shorter. */
export const MAX_HEADERS_TIMEOUT_MS = 10_000;

/** How often Node checks requests against their timeouts, and the guard looks for connections that sent none. */
export const TIMEOUT_CHECK_MS = 500;

export const MUTATING_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const EVENTS_ROUTE = /\/events$/;

declare module 'fastify' {
  interface FastifyInstance {
    /** Open event streams now (for tests and metrics). */
    openEventStreams: () => number;
    /** The connection cap's bookkeeping: open connections, and how many were closed to make room or refused. */
    connectionGuard: ConnectionGuard;
  }
}

export default fp<Partial<ConnectionLimits>>(
  async (app, options) => {
    const limits: ConnectionLimits = { ...DEFAULT_LIMITS, ...definedOnly(options) };
    const server = app.server;
    server.requestTimeout = limits.requestTimeoutMs;
    server.headersTimeout = Math.min(MAX_HEADERS_TIMEOUT_MS, limits.requestTimeoutMs);
    // Not server.maxConnections: at the cap Node refuses new connections even when the open ones sit idle.
    app.decorate(
      'connectionGuard',
      new ConnectionGuard(server, {
        maxConnections: limits.maxConnections,
        // One check later than Node's own header timeout, so a client that sent part of its headers gets Node's 408.
        firstRequestTimeoutMs: server.headersTimeout + TIMEOUT_CHECK_MS,
        sweepMs: TIMEOUT_CHECK_MS,
      }),
    );

    let streams = 0;
    app.decorate('openEventStreams', () => streams);
    const countStream = async (_request: FastifyRequest, reply: FastifyReply) => {
      if (streams >= limits.maxEventStreams) {
        throw new TooManyStreamsError(
          `${limits.maxEventStreams} event streams are open, the most this daemon serves (TOPOD_MAX_EVENT_STREAMS); retry later, or poll with ETags.`,
          {
            headers: { 'retry-after': '30' },
          },
        );
      }
      streams++;
      let counted = true;
      reply.raw.once('close', () => {
        if (counted) streams--;
        counted = false;
      });
    };
    // Route by route, not a global hook: the polled read routes pay nothing for limits that are not theirs
    // (global hooks for the stream cap and the rate limit cost a third of GET /topology's throughput).
    app.addHook('onRoute', (route) => {
      const methods = [route.method].flat();
      if (methods.includes('GET') && EVENTS_ROUTE.test(route.url)) route.onRequest = [...[route.onRequest ?? []].flat(), countStream];
      if (!methods.some((method) => MUTATING_METHODS.has(method))) route.config = { ...(route.config ?? {}), rateLimit: false };
    });

    await app.register(rateLimit, {
      global: true,
      max: limits.rateLimitPerMinute,
      timeWindow: 60_000,
      keyGenerator: (request: FastifyRequest) => request.ip,
      // Only answers that are limited carry rate headers: reads are never limited and need none.
      addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
      errorResponseBuilder: (_request, context) =>
        new RateLimitedError(
          `More than ${context.max} mutating requests from this address in a minute (TOPOD_RATE_LIMIT_PER_MIN); retry after ${Math.ceil(context.ttl / 1000)} s.`,
          {
            headers: { 'retry-after': String(Math.ceil(context.ttl / 1000)) },
          },
        ),
    });
  },
  { name: 'topod-connection-limits', dependencies: ['topod-problems'] },
);

function definedOnly(options: Partial<ConnectionLimits>): Partial<ConnectionLimits> {
  return Object.fromEntries(
    Object.entries(options).filter(([key, value]) => value !== undefined && key in DEFAULT_LIMITS),
  ) as Partial<ConnectionLimits>;
}
