/**
 * The requests main.ts injects before binding the port (server/api/warm-up.ts)
 * are answered by the app as any request is, and leave no trace in the HTTP
 * metrics: a scrape afterwards counts only real clients' requests.
 */
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { warmUpRequests } from '../../../server/api/warm-up.js';
import { buildTestApp, type TestApp } from './harness.js';

const HTTP_COUNT = /^topod_http_request_duration_seconds_count\{([^}]*)\} (\d+)/gm;

describe('the warm-up requests before the port is bound', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(() => t.app.close());

  it('answer every kind of request, and the HTTP metrics forget them', async () => {
    const answered: string[] = [];
    // The app itself, its answers recorded on the way.
    const recording = {
      metrics: t.app.metrics,
      inject: async (options: InjectOptions) => {
        const response = await t.app.inject(options);
        answered.push(`${options.url} ${response.statusCode}`);
        return response;
      },
    } as unknown as FastifyInstance;
    await warmUpRequests(recording);
    expect(answered).toEqual(
      expect.arrayContaining([
        '/healthz 200',
        '/v1/gpus 200',
        '/v1/jobs?limit=1 200',
        '/metrics 200',
        expect.stringMatching(/^\/v1\/gpus\/0\/topology /),
      ]),
    );
    await t.app.inject({ method: 'GET', url: '/v1/gpus' });
    const scrape = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const counted = [...scrape.matchAll(HTTP_COUNT)].map((match) => ({ labels: match[1], count: Number(match[2]) }));
    expect(counted).toEqual([{ labels: expect.stringContaining('route="/v1/gpus"'), count: 1 }]);
  });
});
