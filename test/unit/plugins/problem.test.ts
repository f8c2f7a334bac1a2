import { describe, expect, it } from 'vitest';
import { renderProblem } from '../../../server/plugins/problem.js';
import { ConflictError, PROBLEM_CODES, problemType } from '../../../server/errors.js';

describe('problemType', () => {
  it('derives a stable URN from the code', () => {
    expect(problemType('TOPOD_ERR_TOPOLOGY_PENDING')).toBe('urn:topod:problem:topology-pending');
  });

  it('gives every code its own type', () => {
    expect(new Set(PROBLEM_CODES.map(problemType)).size).toBe(PROBLEM_CODES.length);
  });
});

describe('renderProblem', () => {
  it('keeps a TopodError with its extensions and headers', () => {
    const rendered = renderProblem(
      new ConflictError('busy', { extensions: { jobUrl: '/v1/jobs/j' }, headers: { link: '</v1/jobs/j>' } }),
      '/v1/x',
    );
    expect(rendered).toEqual({
      problem: {
        type: 'urn:topod:problem:conflict',
        title: 'Conflict',
        status: 409,
        detail: 'busy',
        instance: '/v1/x',
        code: 'TOPOD_ERR_CONFLICT',
        jobUrl: '/v1/jobs/j',
      },
      headers: { link: '</v1/jobs/j>' },
      unexpected: false,
    });
  });

  it('does not let an extension overwrite a standard member', () => {
    const { problem } = renderProblem(new ConflictError('busy', { extensions: { status: 200, code: 'X' } }), '/');
    expect(problem).toMatchObject({ status: 409, code: 'TOPOD_ERR_CONFLICT' });
  });

  it('maps fastify validation errors with a pointer per issue', () => {
    const error = Object.assign(new Error('body/only/0 must be equal to one of the allowed values'), {
      statusCode: 400,
      code: 'FST_ERR_VALIDATION',
      validationContext: 'body',
      validation: [
        { instancePath: '/only/0', message: 'must be equal to one of the allowed values', params: {} },
        { instancePath: '', message: "must have required property 'x'", params: { missingProperty: 'x' } },
      ],
    });
    const { problem } = renderProblem(error, '/');
    expect(problem.code).toBe('TOPOD_ERR_VALIDATION');
    expect(problem['errors']).toEqual([
      { in: 'body', pointer: '/only/0', message: 'must be equal to one of the allowed values' },
      { in: 'body', pointer: '/x', message: "must have required property 'x'" },
    ]);
  });

  it.each([
    ['FST_ERR_CTP_INVALID_JSON_BODY', 400, 'TOPOD_ERR_MALFORMED_BODY'],
    ['FST_ERR_CTP_BODY_TOO_LARGE', 413, 'TOPOD_ERR_BODY_TOO_LARGE'],
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415, 'TOPOD_ERR_UNSUPPORTED_MEDIA_TYPE'],
  ])('maps fastify %s to %i %s', (fastifyCode, status, code) => {
    const { problem } = renderProblem(Object.assign(new Error('x'), { code: fastifyCode, statusCode: status }), '/');
    expect(problem).toMatchObject({ status, code });
  });

  it('keeps the status of another fastify 4xx', () => {
    const { problem } = renderProblem(Object.assign(new Error('Request body size did not match'), { statusCode: 408 }), '/');
    expect(problem).toMatchObject({ status: 408, code: 'TOPOD_ERR_BAD_REQUEST', title: 'Request Timeout' });
  });

  it.each([new Error('ENOENT /secret/path'), 'a thrown string', null])('hides the detail of an unexpected %s', (thrown) => {
    const rendered = renderProblem(thrown, '/');
    expect(rendered.unexpected).toBe(true);
    expect(rendered.problem).toMatchObject({ status: 500, code: 'TOPOD_ERR_INTERNAL' });
    expect(JSON.stringify(rendered.problem)).not.toContain('secret');
  });
});
