import { describe, expect, it } from 'vitest';
import { RouteMethodIndex } from '../../../server/plugins/route-methods.js';

describe('RouteMethodIndex', () => {
  const index = new RouteMethodIndex();
  index.add('/v1/gpus/:id', 'GET');
  index.add('/v1/gpus/:id', ['HEAD']);
  index.add('/v1/gpus/:id/probe', 'POST');
  index.add('/docs/static/*', 'GET');
  index.add('/a.b', 'GET');

  it('unions the methods of a parametric path', () => {
    expect(index.allowed('/v1/gpus/GPU-1')).toEqual(['GET', 'HEAD']);
    expect(index.allowed('/v1/gpus/0/')).toEqual(['GET', 'HEAD']);
  });

  it('keeps a parameter to one segment', () => {
    expect(index.allowed('/v1/gpus/0/probe')).toEqual(['POST']);
    expect(index.allowed('/v1/gpus/0/x/probe')).toEqual([]);
  });

  it('lets a wildcard take the rest', () => {
    expect(index.allowed('/docs/static/css/a.css')).toEqual(['GET']);
  });

  it('treats dots literally', () => {
    expect(index.allowed('/aXb')).toEqual([]);
  });
});
