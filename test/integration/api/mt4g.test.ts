/**
 * GET /v1/gpus/{id}/topology?format=mt4g (and Accept: application/vnd.mt4g+json):
 * MT4G's file shape — sections, keys in dump(4) order, the shapes of MT4G's
 * own H100 sample — nothing invented, topod-only data under `topod`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonHost } from '../../../server/api/mt4g.js';
import { MT4G_EXTENSION_KEY, mt4gJson, mt4gRunRecord, sortKeys } from '../../../server/faces/mt4g-export.js';
import { DocumentTopology, mergedGpu, recordedH100Result } from '../../helpers/face-documents.js';
import { buildTestApp, PROBLEM_TYPE, type TestApp } from './harness.js';

const SAMPLE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../../shared/third-party/mt4g-samples/NVIDIA_H100_80GB_HBM3.json',
);

describe('MT4G export', () => {
  let t: TestApp | undefined;
  afterEach(async () => t?.app.close());
  const gpu = mergedGpu(recordedH100Result(), 'h100-80gb-mig-mixed.json');

  it('is MT4G’s file: dump(4) layout, its sections, its shapes; what is not measured is left out', () => {
    const text = mt4gJson(gpu.merged);
    const exported = JSON.parse(text) as Record<string, any>;
    // dump(4): keys sorted at every level, four-space indentation (doubles as doubles: test/unit/faces/mt4g-export.test.ts).
    expect(JSON.stringify(exported, null, 4)).toBe(JSON.stringify(sortKeys(exported), null, 4));
    expect(text.split('\n')[1]).toBe('    "compute": {');
    expect(Object.keys(exported)).toEqual(['compute', 'general', 'memory', 'meta', MT4G_EXTENSION_KEY]);
    // The recorded run measured no texture, read-only or constant caches and no bandwidth: none is written.
    const elements = gpu.merged.elements;
    expect('texture' in exported['memory']).toBe(elements.texture !== undefined);
    expect(exported['memory'].main.readBandwidth).toBeUndefined();
    expect(exported['memory'].l1.size.size).toBe(elements.l1!.size!.value);
    expect(exported['memory'].l1.size.confidence).toBe(elements.l1!.size!.confidence);
    // What MT4G has no field for: the MIG view, the L2's segment count, value sources.
    expect(exported[MT4G_EXTENSION_KEY].mig).toEqual(JSON.parse(JSON.stringify(gpu.merged.mig)));
    expect(exported[MT4G_EXTENSION_KEY].l2.segments).toBe(elements.l2!.amount!.value);
    expect(exported[MT4G_EXTENSION_KEY].elements.l2.size.source).toBe(elements.l2!.size!.source);
  });

  // MT4G's own H100 result lives outside the repository (never committed): compared where it is present.
  it.skipIf(!existsSync(SAMPLE))(
    existsSync(SAMPLE)
      ? 'has the shapes of MT4G’s own H100 result (measured size, latency, device values, general section)'
      : `skipped: MT4G's H100 sample is not at ${SAMPLE}`,
    () => {
      const exported = JSON.parse(mt4gJson(gpu.merged)) as Record<string, any>;
      const sample = JSON.parse(readFileSync(SAMPLE, 'utf8')) as Record<string, any>;
      expect(Object.keys(exported['memory'].l1.size).sort()).toEqual(Object.keys(sample['memory'].l1.size).sort());
      // No bandwidth measured: the L2 latency is held back (sys-sage reads them together), in MT4G's shape.
      expect(Object.keys(exported[MT4G_EXTENSION_KEY].withheld['memory.l2.latency']).sort()).toEqual(
        Object.keys(sample['memory'].l2.latency).sort(),
      );
      expect(Object.keys(exported['memory'].l2.size).sort()).toEqual(Object.keys(sample['memory'].l2.size).sort());
      expect(Object.keys(exported['general']).sort()).toEqual(Object.keys(sample['general']).sort());
      expect(Object.keys(exported['meta']).sort()).toEqual(Object.keys(sample['meta']).sort());
    },
  );

  it('a result without device properties (no hello in its raw series) is a 409 problem, not a file sys-sage cannot read', async () => {
    const bare = mergedGpu({ ...recordedH100Result(), device: {} }, 'h100-80gb-mig-mixed.json');
    t = await buildTestApp({ topology: new DocumentTopology([bare]) });
    const response = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/topology?format=mt4g' });
    expect(response.statusCode).toBe(409);
    expect(response.headers['content-type']).toMatch(PROBLEM_TYPE);
    expect(response.json()).toMatchObject({ status: 409, code: 'TOPOD_ERR_EXPORT_INCOMPLETE' });
    expect(response.json().detail).toMatch(/probe it again/);
    // The document itself is still served.
    expect((await t.app.inject({ method: 'GET', url: '/v1/gpus/0/topology' })).statusCode).toBe(200);
  });

  it('is served for ?format=mt4g and for Accept: application/vnd.mt4g+json; a MIG device gets its own SMs, L2 share and memory', async () => {
    t = await buildTestApp({ topology: new DocumentTopology([gpu]) });
    const byQuery = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/topology?format=mt4g' });
    expect(byQuery.statusCode).toBe(200);
    expect(byQuery.headers['content-type']).toBe('application/vnd.mt4g+json; charset=utf-8');
    expect(byQuery.body).toBe(mt4gJson(gpu.merged, { run: mt4gRunRecord(gpu.merged, daemonHost()) }));
    expect(byQuery.json().meta.os).toBe(daemonHost().osName);
    const byAccept = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/topology', headers: { accept: 'application/vnd.mt4g+json' } });
    expect(byAccept.body).toBe(byQuery.body);
    const json = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/topology?format=json' });
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(json.headers.etag).not.toBe(byQuery.headers.etag);
    const cached = await t.app.inject({
      method: 'GET',
      url: '/v1/gpus/0/topology?format=mt4g',
      headers: { 'if-none-match': String(byQuery.headers.etag) },
    });
    expect(cached.statusCode).toBe(304);

    const instance = gpu.merged.mig!.instances[0]!;
    const mig = (await t.app.inject({ method: 'GET', url: `/v1/gpus/${instance.migDeviceUuid}/topology?format=mt4g` })).json();
    expect(mig.compute.multiProcessorCount).toBe(instance.computeInstances[0]?.multiprocessorCount ?? instance.multiprocessorCount);
    expect(mig.memory.l2.size.value).toBe(instance.l2.bytes);
    expect(mig.memory.main.totalGlobalMem.value).toBe(instance.memorySizeBytes);
    expect(mig[MT4G_EXTENSION_KEY].migDevice.gpuInstanceId).toBe(instance.gpuInstanceId);

    const bad = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/topology?format=xml' });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toMatch(PROBLEM_TYPE);
  });
});
