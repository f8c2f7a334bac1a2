/**
 * The routes polled while probes run compile their response validators with
 * the route (server/plugins/eager-serializers.ts): no answer of theirs, in any
 * shape (nulls, values, a failed job's error), compiles one on the event loop.
 * The control shows what the spy sees when a serialiser compiles lazily.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Ajv } from 'ajv';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeGpu, makeJob } from './fake-topology.js';
import { buildTestApp, type TestApp } from './harness.js';

/** ajv compiles a schema (a validator's code) here, whether at build or at first use. */
function spyOnAjvCompiles() {
  return vi.spyOn(Ajv.prototype as unknown as { _compileSchemaEnv: (env: unknown) => unknown }, '_compileSchemaEnv');
}

describe('the polled routes compile their validators at boot', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
    await t.app.ready();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await t.app.close();
  });

  it('compiles nothing while answering GPUs and jobs with null and non-null fields', async () => {
    const probing = makeGpu({
      index: 1,
      pciBusId: null,
      probe: { status: 'running', stale: true, staleReason: 'driver changed', lastResultAt: null, activeJobId: 'j2' },
    });
    t.topology.gpus = [makeGpu({ index: 0 }), probing];
    t.topology.jobs = [
      makeJob({ id: 'j1', state: 'succeeded', resultId: 7, startedAt: '2025-01-01T00:00:01.000Z', finishedAt: '2025-01-01T00:00:02.000Z' }),
      makeJob({ id: 'j2', state: 'running', phase: 'l2', only: ['l1'], startedAt: '2025-01-01T00:00:01.000Z' }),
      makeJob({ id: 'j3', state: 'failed', error: { code: 'TOPOD_ERR_PROBE_TIMEOUT', message: 'timed out' } }),
      makeJob({ id: 'j4', state: 'waiting', waitingSince: '2025-01-01T00:00:01.000Z' }),
    ];
    const compiles = spyOnAjvCompiles();
    const urls = ['/v1/gpus', '/v1/gpus/0', '/v1/gpus/1', '/v1/jobs', '/v1/jobs?limit=1', '/v1/jobs/j1', '/v1/jobs/j2', '/v1/jobs/j3'];
    for (const url of urls) expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
    expect(compiles).not.toHaveBeenCalled();
  });

  it('(control) a serialiser built the default way compiles at its first nullable answer', () => {
    const serialize = SerializerSelector()({}, {})({
      schema: { type: 'object', properties: { at: { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] } } },
      method: 'GET',
      url: '/',
      httpStatus: '200',
    });
    const compiles = spyOnAjvCompiles();
    expect(serialize({ at: null })).toBe('{"at":null}');
    expect(compiles).toHaveBeenCalled();
  });
});
