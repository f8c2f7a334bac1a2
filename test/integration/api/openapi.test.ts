import { Validator } from '@seriousme/openapi-schema-validator';
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { renderOpenApi } from '../../../server/openapi-document.js';
import { buildTestApp, type TestApp } from './harness.js';

const root = new URL('../../../', import.meta.url);
const readCommitted = () => readFile(new URL('openapi/openapi.json', root), 'utf8');
const packageVersion = async () => (JSON.parse(await readFile(new URL('package.json', root), 'utf8')) as { version: string }).version;

interface Operation {
  tags?: string[];
  operationId?: string;
  responses?: Record<string, unknown>;
}

describe('OpenAPI document', () => {
  let t: TestApp | undefined;
  afterEach(() => t?.app.close());

  it('committed openapi/openapi.json matches the route schemas (run `npm run openapi` when this fails)', async () => {
    expect(await readCommitted()).toBe(await renderOpenApi(await packageVersion()));
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(await readCommitted()));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('gives every operation tags, an operationId and each error status it can answer', async () => {
    const spec = JSON.parse(await readCommitted()) as { paths: Record<string, Record<string, Operation>> };
    const operations = Object.entries(spec.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ path, method, op })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(9);
    for (const { op } of operations) {
      expect(op.tags?.length).toBeGreaterThan(0);
      expect(op.operationId).toEqual(expect.any(String));
    }
    const probe = spec.paths['/v1/gpus/{id}/probe']?.['post'];
    expect(Object.keys(probe?.responses ?? {}).sort()).toEqual(['202', '400', '401', '403', '404', '409', '413', '415', '503']);
  });

  it('declares every tag an operation uses, with a description', async () => {
    const spec = JSON.parse(await readCommitted()) as {
      tags: Array<{ name: string; description?: string }>;
      paths: Record<string, Record<string, Operation>>;
    };
    const used = new Set(Object.values(spec.paths).flatMap((methods) => Object.values(methods).flatMap((op) => op.tags ?? [])));
    const declared = new Map(spec.tags.map((tag) => [tag.name, tag.description]));
    for (const tag of used) expect(declared.get(tag), `tag "${tag}"`).toEqual(expect.stringMatching(/\S/));
  });

  it('is served at /openapi.json and Swagger UI at /docs', async () => {
    t = await buildTestApp();
    const spec = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(spec.statusCode).toBe(200);
    expect(spec.json().openapi).toBe('3.1.0');
    expect(Object.keys(spec.json().paths)).toContain('/v1/gpus/{id}/topology');
    const docs = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-type']).toMatch(/text\/html/);
    expect(docs.body).toContain('swagger');
  });
});
