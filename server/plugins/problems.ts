/**
 * The one error handler and the not-found handler: every 4xx/5xx leaves as
 * RFC 9457 application/problem+json. Full context goes to the log; a 5xx we
 * did not mean to send never shows its internals to the client.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  HeadersTooLargeError,
  MalformedRequestError,
  MethodNotAllowedError,
  NotFoundError,
  RequestTimeoutError,
  ShuttingDownError,
  type TopodError,
} from '../errors.js';
import { PROBLEM_CONTENT_TYPE, renderProblem } from './problem.js';
import { RouteMethodIndex } from './route-methods.js';

function pathOf(request: FastifyRequest): string {
  const queryAt = request.url.indexOf('?');
  return queryAt === -1 ? request.url : request.url.slice(0, queryAt);
}

/** Logs and sends `thrown` as problem+json; also fastify's `frameworkErrors` hook (bad URL, over-long parameter). */
export function sendProblem(thrown: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { problem, headers, unexpected } = renderProblem(thrown, pathOf(request));
  if (unexpected) {
    request.log.error({ err: thrown, req: request }, 'request failed');
  } else if (problem.status >= 500 || problem.status === 401 || problem.status === 403) {
    // Refused credentials are worth an admin's attention, as are 5xx we chose to send.
    request.log.warn({ code: problem.code, remoteAddress: request.ip, detail: problem.detail }, problem.title);
  } else {
    request.log.info({ code: problem.code, status: problem.status }, problem.detail);
  }
  // Headers a failed route set for its success path (ETag, Location) do not describe a problem.
  reply.removeHeader('etag').removeHeader('location').removeHeader('cache-control');
  return reply
    .code(problem.status)
    .headers(headers)
    .header('cache-control', 'no-store')
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify({ ...problem, requestId: request.id }));
}

/** Node's HTTP parser error → the problem it answers (the request never reached fastify, so no route, no request id). */
function parserProblem(error: NodeJS.ErrnoException): TopodError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new HeadersTooLargeError('The request line and headers are larger than this server accepts (16 KiB).');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new RequestTimeoutError('The request did not arrive in full within the request timeout (TOPOD_REQUEST_TIMEOUT_MS).');
    case 'HPE_INVALID_METHOD':
      return new MalformedRequestError('The request method is not one HTTP knows.');
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_LF_EXPECTED':
    case 'HPE_CR_EXPECTED':
      return new MalformedRequestError('A request header is malformed (invalid characters or line endings).');
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_INVALID_CONTENT_LENGTH':
      return new MalformedRequestError(
        'Content-Length and Transfer-Encoding are malformed or both present; the request is refused (request smuggling).',
      );
    default:
      return new MalformedRequestError('The HTTP request cannot be parsed.');
  }
}

/** How long a connection answered by the parser hook may stay open for its client to read the answer. */
const CLIENT_ERROR_LINGER_MS = 1000;

/**
 * fastify's `clientErrorHandler`: errors the HTTP parser raises before any
 * request exists (a method like FOO, a garbage request line, NUL in a header,
 * smuggling attempts, headers over 16 KiB, a request timeout) leave as
 * problem+json too, the connection closed. The URI is never echoed.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { problem } = renderProblem(parserProblem(error), '');
  const body = JSON.stringify({ ...problem, instance: '' });
  socket.end(
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Bad Request'}\r\n` +
      `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
  // The server allows half-open sockets: a client that never closes its side (a slowloris still trickling)
  // would keep the connection. It gets a moment to read the answer (a reset at once could discard it), then goes.
  setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
}

export default fp(
  async (app) => {
    const methods = new RouteMethodIndex();
    app.addHook('onRoute', (route) => methods.add(route.url, route.method));

    app.setErrorHandler((error, request, reply) => sendProblem(error, request, reply));

    // Replaces fastify's return503OnClosing (a fixed non-problem body) for
    // requests still arriving on open keep-alive connections during close.
    let closing = false;
    app.addHook('preClose', (done) => {
      closing = true;
      done();
    });
    app.addHook('onRequest', (_request, _reply, done) => {
      if (!closing) return done();
      done(
        new ShuttingDownError('topod is shutting down; retry shortly or against another instance.', {
          headers: { connection: 'close', 'retry-after': '1' },
        }),
      );
    });

    app.setNotFoundHandler((request, reply) => {
      const path = pathOf(request);
      const allowed = methods.allowed(path);
      if (allowed.length > 0) {
        const allow = allowed.join(', ');
        return sendProblem(
          new MethodNotAllowedError(`${request.method} is not accepted on ${path}; allowed: ${allow}.`, { headers: { allow } }),
          request,
          reply,
        );
      }
      return sendProblem(new NotFoundError(`No route ${request.method} ${path}.`), request, reply);
    });
  },
  { name: 'topod-problems' },
);
