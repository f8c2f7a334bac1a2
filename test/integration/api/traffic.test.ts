/**
 * GET /v1/gpus/{id}/traffic: the prediction follows the document's own
 * traffic section (measured on the simulated H100), names the numbers it
 * used, and every error is problem+json.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { trafficPrediction } from '../../../server/api/traffic.js';
import { discover } from '../../../server/discovery/index.js';
import { GPU_MODELS } from '../../../server/gpu/sim/index.js';
import { Prng } from '../../../server/gpu/sim/prng.js';
import { SimulatedChannel } from '../../../server/gpu/sim/simulated-channel.js';
import { SimulatedDevice } from '../../../server/gpu/sim/simulated-device.js';
import { SimulatedProbe } from '../../../server/gpu/sim/simulated-probe.js';
import type { ResultDocument } from '../../../server/model/document.js';
import type { TrafficTopology } from '../../../server/model/traffic-schema.js';
import { documentErrors } from '../../helpers/document-validator.js';
import { DocumentTopology, mergedGpu, recordedH100Result } from '../../helpers/face-documents.js';
import { PROBLEM_TYPE, buildTestApp, type TestApp } from './harness.js';

let traffic: TrafficTopology;

beforeAll(async () => {
  const model = GPU_MODELS['h100-sxm5-80gb']!;
  const channel = new SimulatedChannel(
    new SimulatedProbe(new SimulatedDevice(model, new Prng(11)), { index: 0, uuid: 'GPU-sim-traffic', name: model.name, pciBusId: null }),
  );
  const outcome = await discover(channel, { only: ['traffic'] });
  traffic = outcome.traffic!;
});

function withTraffic(): ResultDocument {
  return { ...recordedH100Result(), traffic };
}

describe('traffic prediction', () => {
  it('a served document with traffic is valid against the document schema', () => {
    const gpu = mergedGpu(withTraffic(), null);
    expect(documentErrors('GpuTopologyDocument', gpu.merged)).toEqual([]);
  });

  it('reads whole spans at small strides and one fill per access past it; writes to a written array also read (allocating stores)', () => {
    const { merged } = mergedGpu(withTraffic(), null);
    const footprintBytes = 800e6;
    const dense = trafficPrediction(merged, { strideBytes: 4, footprintBytes });
    expect(dense.bytesPerUsefulByte).toBeCloseTo(1, 2);
    const fill = traffic.readFillBytes!.value;
    const sparse = trafficPrediction(merged, { strideBytes: 1024, footprintBytes });
    // The simulated GPU does what the model says: the measured curve's factor stays near 1.
    expect(Math.abs(sparse.dramReadBytes / (sparse.accesses * fill) - 1)).toBeLessThan(0.01);
    expect(sparse.modelBytesPerUsefulByte).toBeCloseTo(fill / 4, 1);
    expect(sparse.used.curveFactor.source).toBe('microbenchmark');
    expect(Math.abs(sparse.used.curveFactor.value - 1)).toBeLessThan(0.01);
    expect(sparse.lineModelBytesPerUsefulByte).toBeCloseTo(traffic.readTransactionBytes!.value / 4, 1);
    const store = trafficPrediction(merged, { strideBytes: 8, footprintBytes, pattern: 'write' });
    expect(store.dramReadBytes).toBeGreaterThan(0.9 * footprintBytes);
    expect(store.used.storesAllocate.written).toEqual({ value: true, source: 'microbenchmark', method: 'counters' });
    expect(store.used.readFillBytes).toEqual({ value: fill, source: 'microbenchmark', method: 'counters' });
  });

  describe('route', () => {
    let t: TestApp | undefined;
    afterEach(async () => t?.app.close());

    it('answers with the numbers used, and validates every parameter', async () => {
      const gpu = mergedGpu(withTraffic(), 'h100-80gb-mig-mixed.json');
      t = await buildTestApp({ topology: new DocumentTopology([gpu]) });
      const ok = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/traffic?strideBytes=512&footprintBytes=1073741824&pattern=rmw' });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toEqual(
        JSON.parse(JSON.stringify(trafficPrediction(gpu.merged, { strideBytes: 512, footprintBytes: 1073741824, pattern: 'rmw' }))),
      );
      const viaMig = await t.app.inject({
        method: 'GET',
        url: `/v1/gpus/${gpu.migUuids[0]}/traffic?strideBytes=512&footprintBytes=1048576`,
      });
      expect(viaMig.json().gpuUuid).toBe(gpu.summary.uuid);
      for (const query of [
        '',
        '?strideBytes=4',
        '?strideBytes=0&footprintBytes=1',
        '?strideBytes=4&footprintBytes=abc',
        '?strideBytes=4&footprintBytes=16&pattern=scatter',
        '?strideBytes=4&footprintBytes=16&target=stale',
        '?strideBytes=4&footprintBytes=16&x=2',
        '?strideBytes=4&footprintBytes=16&elementBytes=8',
      ]) {
        const bad = await t.app.inject({ method: 'GET', url: `/v1/gpus/0/traffic${query}` });
        expect(bad.statusCode, query).toBe(400);
        expect(bad.headers['content-type']).toMatch(PROBLEM_TYPE);
        expect(bad.json().code).toBe('TOPOD_ERR_VALIDATION');
      }
    });

    it('404 for an unknown GPU and for a GPU whose traffic was never measured (saying how to measure it)', async () => {
      t = await buildTestApp({ topology: new DocumentTopology([mergedGpu(recordedH100Result(), null)]) });
      const never = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/traffic?strideBytes=4&footprintBytes=16' });
      expect(never.statusCode).toBe(404);
      expect(never.headers['content-type']).toMatch(PROBLEM_TYPE);
      expect(never.json().detail).toContain('{"only":["traffic"]}');
      const missing = await t.app.inject({ method: 'GET', url: '/v1/gpus/9/traffic?strideBytes=4&footprintBytes=16' });
      expect(missing.statusCode).toBe(404);
    });
  });
});
