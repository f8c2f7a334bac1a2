/**
 * Errors the HTTP layer answers with. Each class carries a stable `code`
 * (undici style) that is also the last part of the RFC 9457 problem `type`,
 * so a client can switch on either.
 */

/** One scheme for every problem type: `urn:topod:problem:<slug>`, slug from the code. */
export const PROBLEM_TYPE_PREFIX = 'urn:topod:problem:';

export function problemType(code: string): string {
  return PROBLEM_TYPE_PREFIX + code.replace(/^TOPOD_ERR_/, '').toLowerCase().replaceAll('_', '-');
}

export interface TopodErrorOptions {
  /** Extra RFC 9457 members (extensions) sent to the client. */
  extensions?: Record<string, unknown>;
  /** Response headers that belong to this problem (Retry-After, WWW-Authenticate, Location…). */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class TopodError extends Error {
  readonly code: string;
  readonly statusCode: number;
  readonly title: string;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: string, statusCode: number, title: string, detail: string, options: TopodErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TopodError';
    this.code = code;
    this.statusCode = statusCode;
    this.title = title;
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
  }
}

/** Declares a TopodError subclass for one code; keeps the classes one line each. */
function defineError(name: string, code: string, statusCode: number, title: string) {
  const ErrorClass = class extends TopodError {
    static readonly code = code;
    constructor(detail: string, options?: TopodErrorOptions) {
      super(code, statusCode, title, detail, options);
      this.name = name;
    }
  };
  Object.defineProperty(ErrorClass, 'name', { value: name });
  return ErrorClass;
}

export const ValidationError = defineError('ValidationError', 'TOPOD_ERR_VALIDATION', 400, 'Invalid request');
export const MalformedBodyError = defineError('MalformedBodyError', 'TOPOD_ERR_MALFORMED_BODY', 400, 'Malformed request body');
export const MalformedUrlError = defineError('MalformedUrlError', 'TOPOD_ERR_MALFORMED_URL', 400, 'Malformed URL');
export const UnauthorizedError = defineError('UnauthorizedError', 'TOPOD_ERR_UNAUTHORIZED', 401, 'Unauthorized');
export const ForbiddenError = defineError('ForbiddenError', 'TOPOD_ERR_FORBIDDEN', 403, 'Forbidden');
export const NotFoundError = defineError('NotFoundError', 'TOPOD_ERR_NOT_FOUND', 404, 'Not Found');
export const MethodNotAllowedError = defineError('MethodNotAllowedError', 'TOPOD_ERR_METHOD_NOT_ALLOWED', 405, 'Method Not Allowed');
export const ConflictError = defineError('ConflictError', 'TOPOD_ERR_CONFLICT', 409, 'Conflict');
export const BodyTooLargeError = defineError('BodyTooLargeError', 'TOPOD_ERR_BODY_TOO_LARGE', 413, 'Content Too Large');
export const UriTooLongError = defineError('UriTooLongError', 'TOPOD_ERR_URI_TOO_LONG', 414, 'URI Too Long');
export const UnsupportedMediaTypeError = defineError('UnsupportedMediaTypeError', 'TOPOD_ERR_UNSUPPORTED_MEDIA_TYPE', 415, 'Unsupported Media Type');
export const InternalError = defineError('InternalError', 'TOPOD_ERR_INTERNAL', 500, 'Internal Server Error');
export const TopologyPendingError = defineError('TopologyPendingError', 'TOPOD_ERR_TOPOLOGY_PENDING', 503, 'Topology not measured yet');
export const TopologyUnavailableError = defineError('TopologyUnavailableError', 'TOPOD_ERR_TOPOLOGY_UNAVAILABLE', 503, 'Topology unavailable');
export const NoBackendError = defineError('NoBackendError', 'TOPOD_ERR_NO_BACKEND', 503, 'No measurement backend');
export const NotReadyError = defineError('NotReadyError', 'TOPOD_ERR_NOT_READY', 503, 'Not ready');
export const ShuttingDownError = defineError('ShuttingDownError', 'TOPOD_ERR_SHUTTING_DOWN', 503, 'Shutting down');

/** A 4xx raised by fastify itself that has no class of its own; its status is kept. */
export const OTHER_CLIENT_ERROR_CODE = 'TOPOD_ERR_BAD_REQUEST';

/** Every code the API may answer with (documented in the OpenAPI problem schema). */
export const PROBLEM_CODES = [
  ValidationError,
  MalformedBodyError,
  MalformedUrlError,
  UnauthorizedError,
  ForbiddenError,
  NotFoundError,
  MethodNotAllowedError,
  ConflictError,
  BodyTooLargeError,
  UriTooLongError,
  UnsupportedMediaTypeError,
  InternalError,
  TopologyPendingError,
  TopologyUnavailableError,
  NoBackendError,
  NotReadyError,
  ShuttingDownError,
].map((errorClass) => errorClass.code).concat(OTHER_CLIENT_ERROR_CODE);
