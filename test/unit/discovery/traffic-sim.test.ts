import { describe, expect, it } from 'vitest';
import { discover, reanalyse } from '../../../server/discovery/index.js';
import { TRAFFIC_STRIDES, trafficFootprintBytes } from '../../../server/discovery/strategies/traffic.js';
import { accuracyPercent, parametersFromDocument, predictTraffic } from '../../../server/discovery/traffic-predict.js';
import type { ProbeChannel } from '../../../server/gpu/backend.js';
import type { DeviceProperties } from '../../../server/protocol/ops.js';
import { GPU_MODELS, type GpuModel } from '../../../server/gpu/sim/index.js';
import { Prng } from '../../../server/gpu/sim/prng.js';
import { SimulatedChannel } from '../../../server/gpu/sim/simulated-channel.js';
import { SimulatedDevice } from '../../../server/gpu/sim/simulated-device.js';
import { SimulatedProbe } from '../../../server/gpu/sim/simulated-probe.js';
import type { TrafficModel } from '../../../server/gpu/sim/model.js';
import { trafficModelOf, trueTraffic } from '../../../server/gpu/sim/traffic.js';
import type { TrafficTopology } from '../../../server/model/traffic-schema.js';

const H100 = GPU_MODELS['h100-sxm5-80gb']!;
const A100 = GPU_MODELS['a100-40gb']!;

function channelTo(model: GpuModel, seed: number): SimulatedChannel {
  const device = new SimulatedDevice(model, new Prng(seed));
  return new SimulatedChannel(new SimulatedProbe(device, { index: 0, uuid: `GPU-sim-${seed}`, name: model.name, pciBusId: null }));
}

async function trafficOf(model: GpuModel, seed: number): Promise<{ traffic: TrafficTopology; seconds: number; channel: SimulatedChannel }> {
  const channel = channelTo(model, seed);
  const outcome = await discover(channel as ProbeChannel, { only: ['traffic'] });
  expect(outcome.traffic, outcome.warnings.join('\n')).toBeDefined();
  return { traffic: outcome.traffic!, seconds: channel.simulatedDeviceSeconds(), channel };
}

const withTraffic = (model: GpuModel, traffic: Partial<TrafficModel>): GpuModel => ({ ...model, id: `${model.id}-traffic`, traffic });

/** Every attribute the document serves, against the model's truth. */
function expectRecovered(traffic: TrafficTopology, truth: TrafficModel, device: GpuModel) {
  const fill = truth.fillBytes * truth.prefetchFactor;
  expect(traffic.readTransactionBytes?.value).toBe(truth.readTransactionBytes);
  expect(traffic.writeTransactionBytes?.value).toBe(truth.writeTransactionBytes);
  expect(traffic.readFillBytes?.value).toBeCloseTo(fill, -0.5);
  expect(traffic.prefetchFactor?.value).toBeCloseTo(fill / truth.readTransactionBytes, 1);
  expect(traffic.storesAllocate.fresh?.value).toBe(truth.allocatingStores.fresh);
  expect(traffic.storesAllocate.written?.value).toBe(truth.allocatingStores.written);
  expect(traffic.fullSectorStoresRead?.value).toBe(truth.fullSectorStoresRead);
  for (const v of [traffic.readTransactionBytes, traffic.writeTransactionBytes, traffic.readFillBytes, traffic.prefetchFactor]) {
    expect(v?.source).toBe('microbenchmark');
    expect(v?.method).toBe(traffic.method);
    expect(v?.confidence).toBeGreaterThan(0.5);
  }
  // The line-size model and the measure part where an isolated read moves more than one transaction.
  // At a stride of one transaction the accesses still cover the whole span; from two, reads past one transaction show.
  const departs = fill > 1.1 * truth.readTransactionBytes ? 2 * truth.readTransactionBytes : null;
  expect(traffic.departsFromLineModelAtStrideBytes).toBe(departs);
  expect(traffic.footprintBytes).toBe(trafficFootprintBytes(device.device as DeviceProperties));
}

/** The predictor from the served document against the simulator's true bytes, over the paper's sweep (50M and 200M floats). */
function predictorAccuracies(traffic: TrafficTopology, truth: TrafficModel): number[] {
  const parameters = parametersFromDocument(traffic)!;
  expect(parameters).not.toBeNull();
  const accuracies: number[] = [];
  for (const footprintBytes of [50e6 * 4, 200e6 * 4]) {
    for (const pattern of ['read', 'write', 'rmw', 'vecmul'] as const) {
      for (const strideElements of TRAFFIC_STRIDES) {
        for (const target of ['fresh', 'written'] as const) {
          const real = trueTraffic(truth, footprintBytes, { pattern, elementBytes: 4, strideElements, target }, null);
          const predicted = predictTraffic(parameters, {
            pattern,
            strideBytes: 4 * strideElements,
            elementBytes: 4,
            footprintBytes,
            target,
          });
          accuracies.push(accuracyPercent(real.readBytes + real.writeBytes, predicted.readBytes + predicted.writeBytes));
        }
      }
    }
  }
  return accuracies;
}

describe.each([
  ['H100 as modelled', H100, 1],
  ['A100 as modelled', A100, 2],
  [
    'a GPU with the paper’s 1.6× prefetch and non-allocating fresh stores',
    withTraffic(H100, { prefetchFactor: 1.6, fillBytes: 32, allocatingStores: { fresh: false, written: true } }),
    3,
  ],
  ['a GPU whose whole-sector stores read, with 128 B fills', withTraffic(A100, { fullSectorStoresRead: true, fillBytes: 128 }), 4],
])('traffic on %s', (_name, model, seed) => {
  it('recovers every attribute from the counters, and predicts the paper’s sweep within 1 %', async () => {
    const truth = trafficModelOf(model);
    const { traffic } = await trafficOf(model, seed);
    expect(traffic.method).toBe('counters');
    expect(traffic.countersUnavailable).toBeNull();
    expectRecovered(traffic, truth, model);
    expect(Math.min(...predictorAccuracies(traffic, truth))).toBeGreaterThan(99);
    // The timing fallback ran beside the counters and its error is served.
    expect(traffic.fallbackError?.points.length).toBeGreaterThan(0);
    // Its conversion takes stride-1 bytes as one pass per array: right unless whole-sector stores read too.
    if (!truth.fullSectorStoresRead) expect(traffic.fallbackError?.medianPercent).toBeLessThan(5);
    else expect(traffic.fallbackError?.maxPercent).toBeGreaterThan(10);
  });
});

describe('traffic without counters', () => {
  const model = withTraffic(H100, {
    countersUnavailable:
      'profiling is restricted to administrators (NVreg_RestrictProfilingToAdminUsers=1): CUPTI_ERROR_INSUFFICIENT_PRIVILEGES',
  });

  it('times instead, says why, and still recovers the read units and allocating stores', async () => {
    const truth = trafficModelOf(model);
    const { traffic } = await trafficOf(model, 5);
    expect(traffic.method).toBe('timing');
    expect(traffic.countersUnavailable).toContain('CUPTI_ERROR_INSUFFICIENT_PRIVILEGES');
    expect(traffic.readFillBytes?.method).toBe('timing');
    expect(traffic.readFillBytes?.value).toBeCloseTo(truth.fillBytes, -1);
    expect(traffic.readTransactionBytes?.value).toBe(truth.readTransactionBytes);
    expect(traffic.storesAllocate.written?.value).toBe(true);
    expect(traffic.fullSectorStoresRead).toBeNull();
    expect(traffic.fallbackError).toBeNull();
    expect(traffic.curve.every((p) => p.method === 'timing')).toBe(true);
  });
});

describe('traffic as an opt-in family', () => {
  it('is not run by a full probe, and a full probe keeps the previous traffic series', async () => {
    const channel = channelTo(H100, 6);
    const partial = await discover(channel as ProbeChannel, { only: ['traffic'] });
    expect(partial.raw.some((s) => s.op === 'traffic')).toBe(true);
    // Re-analysing the series alone (as a stored result is) rebuilds the same section.
    expect(reanalyse(partial.raw).traffic).toEqual(partial.traffic);
    expect(reanalyse(partial.raw, ['l1']).traffic).toBeUndefined();
  });
});
