/**
 * Guard for mutating endpoints, used as a route onRequest hook (`app.requireAdmin`).
 * With TOPOD_ADMIN_TOKEN set: `Authorization: Bearer <token>` is required.
 * Without: only loopback clients may mutate, so an unconfigured daemon is not
 * an open door on a cluster network — and only with no foreign Origin and a
 * loopback Host, so a web page or DNS rebinding cannot drive a browser on
 * this host to start probes. The token is compared in constant time
 * (auth-checks.ts: both sides hashed, then timingSafeEqual).
 */
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import { bearerToken, browserRefusal, isLoopbackAddress, tokenDigest, tokensEqual } from './auth-checks.js';

declare module 'fastify' {
  interface FastifyInstance {
    requireAdmin: (request: FastifyRequest) => Promise<void>;
  }
}

export interface AdminAuthOptions {
  adminToken: string | null;
}

export const BEARER_SECURITY = [{ bearerAuth: [] as string[] }];

export default fp<AdminAuthOptions>(
  async (app, options) => {
    const expected = options.adminToken === null ? null : tokenDigest(options.adminToken);

    app.decorate('requireAdmin', async (request: FastifyRequest) => {
      if (expected === null) {
        if (isLoopbackAddress(request.ip)) {
          const refusal = browserRefusal({ origin: request.headers.origin, host: request.headers.host });
          if (refusal === null) return;
          throw new ForbiddenError(
            `Without an admin token only local tools may mutate, and this request looks like a browser's on behalf of another site: ${refusal}. ` +
              'Send it without an Origin header to a loopback address, or configure TOPOD_ADMIN_TOKEN.',
          );
        }
        throw new ForbiddenError(
          'Mutating requests are only accepted from loopback clients while no admin token is configured; ' +
            'start topod with TOPOD_ADMIN_TOKEN (or --admin-token) and send "Authorization: Bearer <token>".',
        );
      }
      const presented = bearerToken(request.headers.authorization);
      if (presented === null) {
        throw new UnauthorizedError('This endpoint needs "Authorization: Bearer <admin token>".', {
          headers: { 'www-authenticate': 'Bearer realm="topod"' },
        });
      }
      if (!tokensEqual(presented, expected)) {
        throw new UnauthorizedError('The bearer token is not the admin token.', {
          headers: { 'www-authenticate': 'Bearer realm="topod", error="invalid_token"' },
        });
      }
    });
  },
  { name: 'topod-admin-auth' },
);
