/**
 * Guard for mutating endpoints, used as a route onRequest hook (`app.requireAdmin`).
 * With TOPOD_ADMIN_TOKEN set: `Authorization: Bearer <token>` is required.
 * Without: only loopback clients may mutate, so an unconfigured daemon is not
 * an open door on a cluster network.
 */
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import { bearerToken, isLoopbackAddress, tokenDigest, tokensEqual } from '../api/auth-checks.js';

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
        if (isLoopbackAddress(request.ip)) return;
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
