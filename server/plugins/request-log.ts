/**
 * Request logs sized for a daemon that is polled: at `info` every request
 * logged two lines with every header (~425 bytes; 842 MB for 2 M requests).
 * Now successful reads (GET/HEAD, the hot polling routes) log one line at
 * `debug`; mutations, event streams and every error keep fastify's lines at
 * `info`, with only the headers that matter. Rotation is the log collector's
 * job (journald, Docker's json-file max-size, logrotate with copytruncate):
 * topod writes JSON lines to stdout and never reopens a file.
 */
import { LogController, type FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/** Headers worth a log line: who asked, for what, through what. Credentials are redacted by app.ts's paths. */
export const LOGGED_HEADERS = [
  'host',
  'user-agent',
  'content-type',
  'content-length',
  'if-none-match',
  'origin',
  'x-forwarded-for',
  'authorization',
  'cookie',
] as const;

const READ_METHODS = new Set(['GET', 'HEAD']);
/** Levels at which the read line is written. */
const LOGS_DEBUG: ReadonlySet<string> = new Set(['debug', 'trace']);
const STREAM_URL = /^\/v1\/events(\?|$)/;

/** fastify's disableRequestLogging: its info lines are skipped for reads (this plugin logs them at debug). */
export function isQuietRequest(request: { method?: string; url?: string }): boolean {
  return READ_METHODS.has(request.method ?? '') && !STREAM_URL.test(request.url ?? '');
}

/** For `Fastify({ logController })`: fastify's request lines, skipped for quiet requests. */
export function quietReadsLogController(): LogController {
  return new LogController({ disableRequestLogging: isQuietRequest as (req: object) => boolean });
}

/** The `req` serializer: method, URL, address and the headers that matter, nothing else. */
export function requestForLog(request: FastifyRequest) {
  const headers: Record<string, unknown> = {};
  for (const name of LOGGED_HEADERS) if (request.headers[name] !== undefined) headers[name] = request.headers[name];
  return { method: request.method, url: request.url, remoteAddress: request.ip, headers };
}

export default fp(
  async (app) => {
    app.addHook('onResponse', (request, reply, done) => {
      // Checked first: building the line costs an allocation per request, and the polled routes are the hot path.
      if (!LOGS_DEBUG.has(request.log.level) || !isQuietRequest(request)) return done();
      request.log.debug(
        { method: request.method, url: request.url, statusCode: reply.statusCode, responseTimeMs: Math.round(reply.elapsedTime * 10) / 10 },
        'read',
      );
      done();
    });
  },
  { name: 'topod-request-log' },
);
