/**
 * Turns any error thrown while serving a request into an RFC 9457 problem
 * document. Pure: the error handler plugin does the logging and sending.
 */
import { STATUS_CODES } from 'node:http';
import {
  BodyTooLargeError,
  InternalError,
  MalformedBodyError,
  MalformedUrlError,
  NotFoundError,
  OTHER_CLIENT_ERROR_CODE,
  TopodError,
  UnsupportedMediaTypeError,
  UriTooLongError,
  ValidationError,
  problemType,
} from '../errors.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: string;
  [extension: string]: unknown;
}

export interface RenderedProblem {
  problem: Problem;
  headers: Record<string, string>;
  /** 5xx we did not mean to send: log at error level with the full error. */
  unexpected: boolean;
}

interface FastifyLikeError {
  code?: unknown;
  statusCode?: unknown;
  message?: unknown;
  validation?: Array<{ instancePath?: string; message?: string; params?: Record<string, unknown> }>;
  validationContext?: string;
}

/** fastify's own error codes → ours. Anything else with a 4xx status keeps its message. */
const FASTIFY_CODES: Record<string, new (detail: string) => TopodError> = {
  FST_ERR_CTP_INVALID_JSON_BODY: MalformedBodyError,
  FST_ERR_CTP_EMPTY_JSON_BODY: MalformedBodyError,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: MalformedBodyError,
  FST_ERR_CTP_BODY_TOO_LARGE: BodyTooLargeError,
  FST_ERR_CTP_INVALID_MEDIA_TYPE: UnsupportedMediaTypeError,
  FST_ERR_NOT_FOUND: NotFoundError,
  FST_ERR_BAD_URL: MalformedUrlError,
  FST_ERR_MAX_PARAM_LENGTH: UriTooLongError,
};

/** Clearer wording than fastify's where the client must change something. */
const FASTIFY_DETAILS: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Request bodies must be application/json.',
  FST_ERR_CTP_INVALID_JSON_BODY: 'The request body is not valid JSON.',
  // fastify's own message quotes the whole URI; the client sent it, and a log line or a proxy need not see it twice.
  FST_ERR_MAX_PARAM_LENGTH: 'A path parameter is longer than the router accepts; GPU and MIG UUIDs are about 40 characters.',
};

/** Longest `instance` echoed: a 414's or a fuzzer's URI is not sent back whole. */
export const MAX_INSTANCE_LENGTH = 128;

export function instanceOf(path: string): string {
  return path.length <= MAX_INSTANCE_LENGTH ? path : `${path.slice(0, MAX_INSTANCE_LENGTH - 1)}…`;
}

/** ajv's message, naming what it would accept where ajv only says that something else would do. */
function issueMessage(issue: NonNullable<FastifyLikeError['validation']>[number]): string {
  const allowed = issue.params?.['allowedValues'];
  if (Array.isArray(allowed)) return `must be one of ${allowed.map(String).join(', ')}`;
  const additional = issue.params?.['additionalProperty'];
  if (typeof additional === 'string') return `must NOT have additional properties ("${additional}" is not one)`;
  return issue.message ?? 'is invalid';
}

function validationErrors(error: FastifyLikeError): Array<{ in: string; pointer: string; message: string }> {
  return (error.validation ?? []).map((issue) => {
    const missing = issue.params?.['missingProperty'];
    const pointer = (issue.instancePath ?? '') + (typeof missing === 'string' ? `/${missing}` : '');
    return { in: error.validationContext ?? 'request', pointer: pointer === '' ? '/' : pointer, message: issueMessage(issue) };
  });
}

/** fastify's summary line with ajv's vaguer phrases replaced by the errors' own (`jobs --state bogus` names the states). */
function validationDetail(message: string, error: FastifyLikeError): string {
  let detail = message;
  for (const issue of error.validation ?? []) {
    if (issue.message && issueMessage(issue) !== issue.message) detail = detail.replace(issue.message, issueMessage(issue));
  }
  return detail;
}

/** Normalises anything thrown into a TopodError; `unexpected` marks 5xx that were not ours. */
export function asTopodError(thrown: unknown): { error: TopodError; unexpected: boolean } {
  if (thrown instanceof TopodError) return { error: thrown, unexpected: false };
  const error = (typeof thrown === 'object' && thrown !== null ? thrown : {}) as FastifyLikeError;
  const message = typeof error.message === 'string' ? error.message : 'request failed';
  if (Array.isArray(error.validation)) {
    return {
      error: new ValidationError(validationDetail(message, error), { extensions: { errors: validationErrors(error) } }),
      unexpected: false,
    };
  }
  const mapped = typeof error.code === 'string' ? FASTIFY_CODES[error.code] : undefined;
  if (mapped) return { error: new mapped(FASTIFY_DETAILS[error.code as string] ?? message), unexpected: false };
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 400 && status < 500) {
    return { error: new TopodError(OTHER_CLIENT_ERROR_CODE, status, STATUS_CODES[status] ?? 'Bad Request', message), unexpected: false };
  }
  // Internal detail never reaches the client on 5xx; the log gets the original.
  return { error: new InternalError('The server failed to answer this request; see the daemon log.'), unexpected: true };
}

export function renderProblem(thrown: unknown, instance: string): RenderedProblem {
  const { error, unexpected } = asTopodError(thrown);
  return {
    problem: {
      ...error.extensions,
      type: problemType(error.code),
      title: error.title,
      status: error.statusCode,
      detail: error.message,
      instance: instanceOf(instance),
      code: error.code,
    },
    headers: error.headers,
    unexpected,
  };
}
