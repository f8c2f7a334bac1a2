/**
 * GET /v1/gpus/{id}/fit: the advice follows the document's own numbers (the
 * recorded H100 result, fake NVML's H100 profile table), and every error is
 * problem+json.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fitAdvice } from '../../../server/faces/fit.js';
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
    expect(advice.profiles[0]).toMatchObject({ name: 'whole GPU', l2ShareBytes: bare.merged.elements.l2!.size!.value, fitsInL2Share: true });
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
});
