import { describe, expect, it } from 'vitest';
import { cachedSerializers } from '../../../server/plugins/serializer-cache.js';

/** A serialiser factory that counts what it compiles, as fast-json-stringify's would compile code. */
function countingFactory() {
  const compiled: string[] = [];
  const factory = (_externalSchemas: unknown, options?: Record<string, unknown>) => (route: { schema: unknown; url: string }) => {
    compiled.push(`${route.url} ${JSON.stringify(options ?? {})}`);
    return (data: unknown) => JSON.stringify({ schema: route.schema, data });
  };
  return { factory, compiled };
}

const route = (schema: unknown, url = '/v1/gpus') => ({ schema, method: 'GET', url, httpStatus: '200' });
const LIST = { type: 'object', properties: { gpus: { type: 'array' } } };

describe('response serialisers built once per schema', () => {
  it('serve a second app’s copy of a schema with the serialiser the first app built', () => {
    const { factory, compiled } = countingFactory();
    const cached = cachedSerializers(factory);
    const shared = { 'Problem#': { $id: 'Problem#', type: 'object' } };
    const first = cached(shared, {})(route(LIST));
    const second = cached(structuredClone(shared), {})(route(structuredClone(LIST)));
    expect(second).toBe(first);
    expect(compiled).toHaveLength(1);
    expect(second({ gpus: [] })).toBe(JSON.stringify({ schema: LIST, data: { gpus: [] } }));
  });

  it('build again for another schema, other shared schemas or other options', () => {
    const { factory, compiled } = countingFactory();
    const cached = cachedSerializers(factory);
    const base = cached({}, {});
    base(route(LIST));
    base(route({ ...LIST, required: ['gpus'] }));
    cached({ 'Other#': { $id: 'Other#' } }, {})(route(LIST));
    cached({}, { compileValidators: true })(route(LIST));
    expect(compiled).toHaveLength(4);
  });
});
