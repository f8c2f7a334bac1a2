/**
 * Every stable error code topod uses, in one table, and the errors the HTTP
 * layer answers with. Each HTTP error class carries a `code` (undici style)
 * that is also the last part of the RFC 9457 problem `type`, so a client can
 * switch on either. Other modules import their codes from here and never
 * spell a `TOPOD_ERR_*` literal (test/unit/error-codes.test.ts checks).
 */
import type { ProbeErrorCode } from './model/probe-error-code.js';

/** name → [code, one line on what it means]; the README's "Error codes" table lists the same. */
const ERROR_CODE_TABLE = {
  // Boot and internal errors (logged; the daemon stops or the operation fails).
  CONFIG: ['TOPOD_ERR_CONFIG', 'a setting (variable or flag) is invalid; the daemon does not start'],
  MIGRATION: ['TOPOD_ERR_MIGRATION', 'the database schema cannot be brought to this version (newer database, misnumbered migrations)'],
  SIM_CONFIG: ['TOPOD_ERR_SIM_CONFIG', 'the simulated backend was asked for a model it does not know'],
  NVML_ADDON_LOAD: ['TOPOD_ERR_NVML_ADDON_LOAD', 'no topod_nvml.node candidate could be loaded'],
  EMPTY_SAMPLE: ['TOPOD_ERR_EMPTY_SAMPLE', 'a statistic was asked of an empty series'],
  STORE_OPEN: [
    'TOPOD_ERR_STORE_OPEN',
    'the database or its folder cannot be created or opened (the message names the path and the fix); the daemon does not start',
  ],
  STORE_DAMAGED: [
    'TOPOD_ERR_STORE_DAMAGED',
    'the database failed its integrity check or is not a topod database: it was moved aside and a fresh one started',
  ],
  STORE_LOCKED: [
    'TOPOD_ERR_STORE_LOCKED',
    'another topod process (its pid is named) already uses this database; the daemon does not start',
  ],
  STORE_WRITE: [
    'TOPOD_ERR_STORE_WRITE',
    'a write to the database failed (disk full, read-only, I/O error): readiness fails and what is measured is kept in memory',
  ],
  LISTEN: ['TOPOD_ERR_LISTEN', 'the daemon cannot listen on the configured address and port (in use, not permitted); it does not start'],
  STARTUP: ['TOPOD_ERR_STARTUP', 'any other failure while starting; the message says what, the stack is logged at debug'],
  // HTTP problems (the `code` member of a problem+json answer).
  VALIDATION: ['TOPOD_ERR_VALIDATION', 'a parameter, query or body does not match the schema (400)'],
  MALFORMED_BODY: ['TOPOD_ERR_MALFORMED_BODY', 'the request body is not valid JSON (400)'],
  MALFORMED_URL: ['TOPOD_ERR_MALFORMED_URL', 'the URL cannot be decoded (400)'],
  BAD_REQUEST: ['TOPOD_ERR_BAD_REQUEST', 'any other client error fastify raised; its status is kept (4xx)'],
  UNAUTHORIZED: ['TOPOD_ERR_UNAUTHORIZED', 'a mutating request without the configured bearer token (401)'],
  FORBIDDEN: ['TOPOD_ERR_FORBIDDEN', 'a mutating request from a non-loopback client with no token configured (403)'],
  NOT_FOUND: ['TOPOD_ERR_NOT_FOUND', 'no such route, GPU or job (404)'],
  METHOD_NOT_ALLOWED: ['TOPOD_ERR_METHOD_NOT_ALLOWED', 'the route exists, the method does not (405)'],
  CONFLICT: ['TOPOD_ERR_CONFLICT', 'a probe is already queued or running for the GPU (409)'],
  BODY_TOO_LARGE: ['TOPOD_ERR_BODY_TOO_LARGE', 'the body is larger than TOPOD_BODY_LIMIT_BYTES (413)'],
  URI_TOO_LONG: ['TOPOD_ERR_URI_TOO_LONG', 'a path parameter is too long (414)'],
  MALFORMED_REQUEST: [
    'TOPOD_ERR_MALFORMED_REQUEST',
    'the HTTP request itself cannot be parsed (bad request line or method, bad header, smuggling attempt) (400)',
  ],
  HEADERS_TOO_LARGE: ['TOPOD_ERR_HEADERS_TOO_LARGE', 'the request line and headers are larger than the server accepts (431)'],
  REQUEST_TIMEOUT: ['TOPOD_ERR_REQUEST_TIMEOUT', 'the request headers or body did not arrive within the request timeout (408)'],
  RATE_LIMITED: ['TOPOD_ERR_RATE_LIMITED', 'too many mutating requests from this client; see Retry-After (429)'],
  TOO_MANY_STREAMS: ['TOPOD_ERR_TOO_MANY_STREAMS', 'the event stream limit (TOPOD_MAX_EVENT_STREAMS) is reached (503)'],
  UNSUPPORTED_MEDIA_TYPE: ['TOPOD_ERR_UNSUPPORTED_MEDIA_TYPE', 'a body that is not application/json (415)'],
  INTERNAL: ['TOPOD_ERR_INTERNAL', 'an unexpected server error; the detail is in the daemon log (500)'],
  TOPOLOGY_PENDING: ['TOPOD_ERR_TOPOLOGY_PENDING', 'the first probe of the GPU has not finished; see jobUrl (503)'],
  TOPOLOGY_UNAVAILABLE: ['TOPOD_ERR_TOPOLOGY_UNAVAILABLE', 'the GPU has no result and none can be measured now (503)'],
  NO_BACKEND: ['TOPOD_ERR_NO_BACKEND', 'no measurement backend, so nothing can be probed (503)'],
  NOT_READY: ['TOPOD_ERR_NOT_READY', 'a readiness check failed (503)'],
  SHUTTING_DOWN: ['TOPOD_ERR_SHUTTING_DOWN', 'the daemon is stopping (503)'],
  EXPORT_INCOMPLETE: [
    'TOPOD_ERR_EXPORT_INCOMPLETE',
    'the result holds no device properties (rebuilt from raw series recorded without the probe hello), which an MT4G file needs; probe the GPU again (409)',
  ],
  HWLOC_UNAVAILABLE: [
    'TOPOD_ERR_HWLOC_UNAVAILABLE',
    'lstopo (hwloc) is not installed, so the node cannot be answered as hwloc XML; the detail says how to install it (501)',
  ],
  // Probe jobs (a failed or cancelled job's `error.code`).
  JOB_TIMEOUT: ['TOPOD_ERR_JOB_TIMEOUT', 'the whole probe job ran past the job timeout and was aborted'],
  PROBE_REQUEST_TIMEOUT: [
    'TOPOD_ERR_PROBE_REQUEST_TIMEOUT',
    'one probe request overran its deadline: the probe said so, or did not answer in time and was killed',
  ],
  PROBE_CANCELLED: ['TOPOD_ERR_PROBE_CANCELLED', 'the job was cancelled (a forced re-probe, or shutdown)'],
  GPU_BUSY: [
    'TOPOD_ERR_GPU_BUSY',
    'other processes kept using the GPU past the longest wait (TOPOD_PROBE_MAX_WAIT_MS); probe with evenIfBusy to measure anyway',
  ],
  GPU_INTERFERED: [
    'TOPOD_ERR_GPU_INTERFERED',
    'another process started using the GPU during the probe: its measurements were dropped and the job waits to measure again',
  ],
  PROBE_INTERRUPTED: ['TOPOD_ERR_PROBE_INTERRUPTED', 'the daemon stopped while the job was queued or running (marked at the next boot)'],
  PROBE_BAD_REQUEST: ['TOPOD_ERR_PROBE_BAD_REQUEST', "the probe rejected a request's arguments"],
  PROBE_UNKNOWN_OP: ['TOPOD_ERR_PROBE_UNKNOWN_OP', 'the probe does not know a requested operation'],
  PROBE_OUT_OF_MEMORY: ['TOPOD_ERR_PROBE_OUT_OF_MEMORY', 'a measurement buffer did not fit in device memory'],
  PROBE_KERNEL_FAULT: ['TOPOD_ERR_PROBE_KERNEL_FAULT', 'a kernel launch or a kernel failed on the GPU'],
  PROBE_UNSUPPORTED: ['TOPOD_ERR_PROBE_UNSUPPORTED', 'the device cannot do a requested measurement, or the pinned probe sees another GPU'],
  PROBE_INTERNAL: ['TOPOD_ERR_PROBE_INTERNAL', 'the probe failed internally'],
  PROBE_CRASHED: ['TOPOD_ERR_PROBE_CRASHED', 'the probe process died during a request'],
  PROBE_CLOSED: ['TOPOD_ERR_PROBE_CLOSED', 'the probe channel was closed while a request waited'],
  PROBE_SPAWN_FAILED: ['TOPOD_ERR_PROBE_SPAWN_FAILED', 'the probe executable could not be started'],
  PROBE_FAILED: ['TOPOD_ERR_PROBE_FAILED', 'any other failure of a probe job (the message says what)'],
} as const satisfies Record<string, readonly [`TOPOD_ERR_${string}`, string]>;

type ErrorCodeTable = typeof ERROR_CODE_TABLE;
export type ErrorCodeName = keyof ErrorCodeTable;

/** `ERROR_CODES.JOB_TIMEOUT === 'TOPOD_ERR_JOB_TIMEOUT'`: the one place a code is spelled. */
export const ERROR_CODES = Object.freeze(Object.fromEntries(Object.entries(ERROR_CODE_TABLE).map(([name, [code]]) => [name, code]))) as {
  readonly [K in ErrorCodeName]: ErrorCodeTable[K][0];
};

export type ErrorCode = (typeof ERROR_CODES)[ErrorCodeName];

/** What each code means, one line each (documentation and the README check). */
export const ERROR_CODE_MEANINGS: ReadonlyMap<ErrorCode, string> = new Map(
  Object.values(ERROR_CODE_TABLE).map(([code, meaning]) => [code, meaning]),
);

export function isErrorCode(value: string): value is ErrorCode {
  return ERROR_CODE_MEANINGS.has(value as ErrorCode);
}

/**
 * A probe's protocol error code (server/protocol/ops.ts, lower case on the
 * wire) → the job error code it becomes. A probe that answers `timeout` hit
 * its own per-request deadline, and a channel that gives up on a silent probe
 * raises `timeout` too: both are one request overrunning, not the job.
 */
export const PROBE_ERROR_CODES: Readonly<Record<ProbeErrorCode, ErrorCode>> = {
  bad_request: ERROR_CODES.PROBE_BAD_REQUEST,
  unknown_op: ERROR_CODES.PROBE_UNKNOWN_OP,
  out_of_memory: ERROR_CODES.PROBE_OUT_OF_MEMORY,
  kernel_fault: ERROR_CODES.PROBE_KERNEL_FAULT,
  timeout: ERROR_CODES.PROBE_REQUEST_TIMEOUT,
  unsupported: ERROR_CODES.PROBE_UNSUPPORTED,
  internal: ERROR_CODES.PROBE_INTERNAL,
  cancelled: ERROR_CODES.PROBE_CANCELLED,
  closed: ERROR_CODES.PROBE_CLOSED,
  crashed: ERROR_CODES.PROBE_CRASHED,
  spawn_failed: ERROR_CODES.PROBE_SPAWN_FAILED,
};

/**
 * The code a failed job records for whatever stopped it: a declared code as
 * is, a probe protocol code through PROBE_ERROR_CODES, anything else
 * (a plain Error, an fs or SQLite code) PROBE_FAILED with its message kept.
 */
export function jobErrorCode(error: unknown): ErrorCode {
  const code = error !== null && typeof error === 'object' && 'code' in error ? error.code : undefined;
  if (typeof code !== 'string') return ERROR_CODES.PROBE_FAILED;
  if (isErrorCode(code)) return code;
  return Object.hasOwn(PROBE_ERROR_CODES, code) ? PROBE_ERROR_CODES[code as ProbeErrorCode] : ERROR_CODES.PROBE_FAILED;
}

/**
 * A failure that stops the daemon from starting. Its message is one line that
 * names the path or setting at fault and what to do; main.ts prints it and
 * exits with status 2 (as for a configuration error), never a stack trace.
 */
export class StartupError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'StartupError';
  }
}

/** One scheme for every problem type: `urn:topod:problem:<slug>`, slug from the code. */
export const PROBLEM_TYPE_PREFIX = 'urn:topod:problem:';

export function problemType(code: string): string {
  return (
    PROBLEM_TYPE_PREFIX +
    code
      .replace(/^TOPOD_ERR_/, '')
      .toLowerCase()
      .replaceAll('_', '-')
  );
}

export interface TopodErrorOptions {
  /** Extra RFC 9457 members (extensions) sent to the client. */
  extensions?: Record<string, unknown>;
  /** Response headers that belong to this problem (Retry-After, WWW-Authenticate, Location…). */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class TopodError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly title: string;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, statusCode: number, title: string, detail: string, options: TopodErrorOptions = {}) {
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
function defineError(name: string, code: ErrorCode, statusCode: number, title: string) {
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

export const ValidationError = defineError('ValidationError', ERROR_CODES.VALIDATION, 400, 'Invalid request');
export const MalformedBodyError = defineError('MalformedBodyError', ERROR_CODES.MALFORMED_BODY, 400, 'Malformed request body');
export const MalformedUrlError = defineError('MalformedUrlError', ERROR_CODES.MALFORMED_URL, 400, 'Malformed URL');
export const UnauthorizedError = defineError('UnauthorizedError', ERROR_CODES.UNAUTHORIZED, 401, 'Unauthorized');
export const ForbiddenError = defineError('ForbiddenError', ERROR_CODES.FORBIDDEN, 403, 'Forbidden');
export const NotFoundError = defineError('NotFoundError', ERROR_CODES.NOT_FOUND, 404, 'Not Found');
export const MethodNotAllowedError = defineError('MethodNotAllowedError', ERROR_CODES.METHOD_NOT_ALLOWED, 405, 'Method Not Allowed');
export const ConflictError = defineError('ConflictError', ERROR_CODES.CONFLICT, 409, 'Conflict');
export const BodyTooLargeError = defineError('BodyTooLargeError', ERROR_CODES.BODY_TOO_LARGE, 413, 'Content Too Large');
export const UriTooLongError = defineError('UriTooLongError', ERROR_CODES.URI_TOO_LONG, 414, 'URI Too Long');
export const MalformedRequestError = defineError('MalformedRequestError', ERROR_CODES.MALFORMED_REQUEST, 400, 'Malformed request');
export const HeadersTooLargeError = defineError(
  'HeadersTooLargeError',
  ERROR_CODES.HEADERS_TOO_LARGE,
  431,
  'Request Header Fields Too Large',
);
export const RequestTimeoutError = defineError('RequestTimeoutError', ERROR_CODES.REQUEST_TIMEOUT, 408, 'Request Timeout');
export const RateLimitedError = defineError('RateLimitedError', ERROR_CODES.RATE_LIMITED, 429, 'Too Many Requests');
export const TooManyStreamsError = defineError('TooManyStreamsError', ERROR_CODES.TOO_MANY_STREAMS, 503, 'Too many event streams');
export const UnsupportedMediaTypeError = defineError(
  'UnsupportedMediaTypeError',
  ERROR_CODES.UNSUPPORTED_MEDIA_TYPE,
  415,
  'Unsupported Media Type',
);
export const InternalError = defineError('InternalError', ERROR_CODES.INTERNAL, 500, 'Internal Server Error');
export const TopologyPendingError = defineError('TopologyPendingError', ERROR_CODES.TOPOLOGY_PENDING, 503, 'Topology not measured yet');
export const TopologyUnavailableError = defineError(
  'TopologyUnavailableError',
  ERROR_CODES.TOPOLOGY_UNAVAILABLE,
  503,
  'Topology unavailable',
);
export const NoBackendError = defineError('NoBackendError', ERROR_CODES.NO_BACKEND, 503, 'No measurement backend');
export const NotReadyError = defineError('NotReadyError', ERROR_CODES.NOT_READY, 503, 'Not ready');
export const ShuttingDownError = defineError('ShuttingDownError', ERROR_CODES.SHUTTING_DOWN, 503, 'Shutting down');
export const ExportIncompleteError = defineError('ExportIncompleteError', ERROR_CODES.EXPORT_INCOMPLETE, 409, 'Conflict');
export const HwlocUnavailableError = defineError('HwlocUnavailableError', ERROR_CODES.HWLOC_UNAVAILABLE, 501, 'Not Implemented');

/** A 4xx raised by fastify itself that has no class of its own; its status is kept. */
export const OTHER_CLIENT_ERROR_CODE = ERROR_CODES.BAD_REQUEST;

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
  MalformedRequestError,
  HeadersTooLargeError,
  RequestTimeoutError,
  RateLimitedError,
  TooManyStreamsError,
  UnsupportedMediaTypeError,
  InternalError,
  TopologyPendingError,
  TopologyUnavailableError,
  NoBackendError,
  NotReadyError,
  ShuttingDownError,
  HwlocUnavailableError,
]
  .map((errorClass) => errorClass.code)
  .concat(OTHER_CLIENT_ERROR_CODE);

/** An error as plain data, for a message between threads: an Error's own fields (`code` above all) do not survive the trip. */
export interface ErrorData {
  name: string;
  code: string | null;
  message: string;
}

/** What a worker thread sends back for an error it caught. */
export function errorToData(error: unknown): ErrorData {
  const code = error !== null && typeof error === 'object' && 'code' in error && typeof error.code === 'string' ? error.code : null;
  return { name: error instanceof Error ? error.name : 'Error', code, message: error instanceof Error ? error.message : String(error) };
}

/** The error a worker thread sent back, rebuilt with its name and code for the caller to throw. */
export function errorFromData(data: ErrorData): Error {
  return Object.assign(new Error(data.message), { name: data.name, ...(data.code ? { code: data.code } : {}) });
}
