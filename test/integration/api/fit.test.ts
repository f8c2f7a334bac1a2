/**
 * GET /v1/gpus/{id}/fit: the advice follows the document's own numbers (the
 * recorded H100 result, fake NVML's H100 profile table; for a described
 * access, the traffic the recorded H100 sweep measured), and every error is
 * problem+json.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTraffic } from '../../../server/discovery/strategies/traffic.js';
import { fitAdvice } from '../../../server/faces/fit.js';
import type { RawSeries } from '../../../server/model/document.js';
import { DocumentTopology, mergedGpu, recordedH100Result } from '../../helpers/face-documents.js';
import { makeJob } from './fake-topology.js';
import { PROBLEM_TYPE, buildTestApp, type TestApp } from './harness.js';

describe('fit advice', () => {
  const gpu = mergedGpu(recordedH100Result(), 'h100-80gb-mig-mixed.json');
  const mig = gpu.merged.mig!;
  const segment = gpu.merged.elements.l2!.segmentSize!.value;

  it('per profile: L2 share and what one SM reaches from the MIG view, latency class from the measured latencies', () => {
    const smallest = Math.min(...mig.profiles.map((p) => p.l2.bytes!));
    const workingSet = Math.floor(smallest / 2);
    const advice = fitAdvice(gpu.merged, workingSet);
    expect(advice.profiles).toHaveLength(mig.profiles.length);
    for (const row of advice.profiles) {
      const profile = mig.profiles.find((p) => p.id === row.profileId)!;
      expect(row.l2ShareBytes).toBe(profile.l2.bytes);
      expect(row.reachablePerSmBytes).toBe(Math.min(profile.l2.bytes!, segment));
      expect(row.fitsInL2Share).toBe(true);
      expect(row.latencyClass).toBe('l2-hit');
      expect(row.expectedLatency?.meanCycles).toBe(gpu.merged.elements.l2!.latency!.mean);
    }
    expect(advice.smallestFittingProfile).toBe(advice.profiles[0]!.name);
    expect(advice.basis).toMatchObject({ l2SizeBytes: mig.l2SizeBytes, l2SegmentBytes: segment, memorySliceCount: mig.memorySliceCount });
  });

  it('larger than one segment but inside a share: far L2; larger than every share: device memory', () => {
    const largest = Math.max(...mig.profiles.map((p) => p.l2.bytes!));
    expect(largest).toBeGreaterThan(segment);
    const far = fitAdvice(gpu.merged, segment + 1);
    const whole = far.profiles.find((p) => p.l2ShareBytes === largest)!;
    expect(whole).toMatchObject({ fitsInL2Share: true, fitsInReachableL2: false, latencyClass: 'l2-far' });
    const none = fitAdvice(gpu.merged, largest + 1);
    expect(none.smallestFittingProfile).toBeNull();
    for (const row of none.profiles) {
      expect(row.latencyClass).toBe('device-memory');
      expect(row.expectedLatency?.meanCycles).toBe(gpu.merged.elements.deviceMemory!.latency!.mean);
    }
  });

  it('without NVML: the whole GPU as the one row', () => {
    const bare = mergedGpu(recordedH100Result(), null);
    const advice = fitAdvice(bare.merged, 1024);
    expect(advice.profiles).toHaveLength(1);
    expect(advice.profiles[0]).toMatchObject({
      name: 'whole GPU',
      l2ShareBytes: bare.merged.elements.l2!.size!.value,
      fitsInL2Share: true,
    });
  });

  describe('route', () => {
    let t: TestApp | undefined;
    afterEach(async () => t?.app.close());

    it('answers by index and by MIG UUID (the parent GPU), and validates workingSetBytes', async () => {
      t = await buildTestApp({ topology: new DocumentTopology([gpu]) });
      const ok = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/fit?workingSetBytes=1048576' });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toEqual(JSON.parse(JSON.stringify(fitAdvice(gpu.merged, 1048576))));
      const viaMig = await t.app.inject({ method: 'GET', url: `/v1/gpus/${gpu.migUuids[0]}/fit?workingSetBytes=1048576` });
      expect(viaMig.json().gpuUuid).toBe(gpu.summary.uuid);
      for (const query of ['', '?workingSetBytes=0', '?workingSetBytes=abc', '?workingSetBytes=1&x=2']) {
        const bad = await t.app.inject({ method: 'GET', url: `/v1/gpus/0/fit${query}` });
        expect(bad.statusCode, query).toBe(400);
        expect(bad.headers['content-type']).toMatch(PROBLEM_TYPE);
        expect(bad.json().code).toBe('TOPOD_ERR_VALIDATION');
      }
    });

    it('404 for an unknown GPU, 503 with the job while the first probe runs', async () => {
      const topology = new DocumentTopology([gpu]);
      t = await buildTestApp({ topology });
      const missing = await t.app.inject({ method: 'GET', url: '/v1/gpus/9/fit?workingSetBytes=1' });
      expect(missing.statusCode).toBe(404);
      expect(missing.headers['content-type']).toMatch(PROBLEM_TYPE);
      const job = makeJob({ gpuUuid: gpu.summary.uuid, state: 'running' });
      topology.documents.set('0', { kind: 'pending', job });
      const pending = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/fit?workingSetBytes=1' });
      expect(pending.statusCode).toBe(503);
      expect(pending.headers['retry-after']).toBe('5');
      expect(pending.json()).toMatchObject({ code: 'TOPOD_ERR_TOPOLOGY_PENDING', jobUrl: `/v1/jobs/${job.id}` });
    });
  });

  describe('traffic of a described access (route)', () => {
    const sweep = JSON.parse(
      gunzipSync(readFileSync(new URL('../../fixtures/h100/traffic-sweep.json.gz', import.meta.url))).toString('utf8'),
    ) as { raw: RawSeries[] };
    const measured = mergedGpu({ ...recordedH100Result(), traffic: buildTraffic(sweep.raw).traffic! }, null);
    let t: TestApp | undefined;
    afterEach(async () => t?.app.close());
    const get = async (query: string) => t!.app.inject({ method: 'GET', url: `/v1/gpus/0/fit?${query}` });

    it('answers the traffic of the access over the working set, defaults filled in; without access fields, the old answer', async () => {
      t = await buildTestApp({ topology: new DocumentTopology([measured]) });
      const rmw = await get('workingSetBytes=1073741824&strideBytes=128&pattern=rmw');
      expect(rmw.statusCode).toBe(200);
      const access = { pattern: 'rmw', target: 'written', strideBytes: 128, elementBytes: 4 } as const;
      expect(rmw.json()).toEqual(JSON.parse(JSON.stringify(fitAdvice(measured.merged, 1073741824, access))));
      expect(rmw.json().traffic).toMatchObject({ measured: true, method: 'counters', access: { ...access, footprintBytes: 1073741824 } });
      expect(rmw.json().traffic.dramBytesPerUsefulByte).toBeGreaterThan(1);
      // Only a pattern: contiguous elements of 4 B. Only an element size: contiguous elements of that size.
      expect((await get('workingSetBytes=1048576&pattern=write')).json().traffic.access).toEqual({
        pattern: 'write',
        target: 'written',
        strideBytes: 4,
        elementBytes: 4,
        footprintBytes: 1048576,
      });
      expect((await get('workingSetBytes=1048576&elementBytes=16&target=fresh')).json().traffic.access).toEqual({
        pattern: 'read',
        target: 'fresh',
        strideBytes: 16,
        elementBytes: 16,
        footprintBytes: 1048576,
      });
      const plain = await get('workingSetBytes=1048576');
      expect(plain.json()).not.toHaveProperty('traffic');
      expect(plain.json()).toEqual(JSON.parse(JSON.stringify(fitAdvice(measured.merged, 1048576))));
    });

    it('a GPU whose traffic was never measured: 200, says so and how to measure it', async () => {
      t = await buildTestApp({ topology: new DocumentTopology([gpu]) });
      const res = await get('workingSetBytes=1073741824&strideBytes=128');
      expect(res.statusCode).toBe(200);
      expect(res.json().traffic).toMatchObject({ measured: false, dramBytesPerUsefulByte: null, effectiveBandwidthBytesPerS: null });
      expect(res.json().traffic.summary).toContain('{"only":["traffic"]}');
    });

    it('bad access fields are 400 problem+json', async () => {
      t = await buildTestApp({ topology: new DocumentTopology([measured]) });
      for (const [query, detail] of [
        ['workingSetBytes=1024&strideBytes=2', /strideBytes must be at least elementBytes \(4\)/],
        ['workingSetBytes=1024&strideBytes=8&elementBytes=16', /strideBytes must be at least elementBytes \(16\)/],
        ['workingSetBytes=8&elementBytes=16', /elementBytes must be at most workingSetBytes/],
        ['workingSetBytes=1024&strideBytes=0', /strideBytes/],
        ['workingSetBytes=1024&elementBytes=256', /elementBytes/],
        ['workingSetBytes=1024&pattern=scatter', /pattern/],
        ['workingSetBytes=1024&target=stale', /target/],
        ['workingSetBytes=1024&strideBytes=abc', /strideBytes/],
      ] as const) {
        const bad = await get(query);
        expect(bad.statusCode, query).toBe(400);
        expect(bad.headers['content-type']).toMatch(PROBLEM_TYPE);
        expect(bad.json().code, query).toBe('TOPOD_ERR_VALIDATION');
        expect(bad.json().detail, query).toMatch(detail);
      }
    });
  });
});
