import type { ElementTopology } from '../../model/document.js';
import { toLatencyValue } from '../latency-value.js';
import { seriesUnder, type Strategy } from '../strategy.js';
import { chaseSamples } from '../stride-series.js';

/**
 * Shared memory (MT4G Table I): its size per SM is what the runtime reports
 * (source "api"); its latency is a chase through a chain staged in the
 * block's shared memory, timed like every other load.
 */
const SERIES = 'shared.latency';
const ARRAY_BYTES = 4096;
const SAMPLES = 1024;

export const SHARED_STRATEGY: Strategy = {
  name: 'shared',
  elements: ['shared'],
  requiredOps: ['pchase'],
  progressWeight: 0.1,
  async measure(session) {
    await session.request(SERIES, 'pchase', {
      space: 'shared',
      arrayBytes: ARRAY_BYTES,
      strideBytes: 4,
      pattern: 'random',
      warmup: true,
      samples: SAMPLES,
      seed: 1,
    });
  },
  build(raw, device, calibration) {
    const element: ElementTopology = {};
    if (device.sharedMemPerMultiprocessorBytes > 0)
      element.size = { value: device.sharedMemPerMultiprocessorBytes, unit: 'bytes', source: 'api' };
    const samples = chaseSamples(raw, SERIES).flatMap((chase) => [...chase.samples]);
    if (samples.length > 0) element.latency = toLatencyValue(samples, calibration);
    return { elements: { shared: element }, warnings: [] };
  },
  ownsSeries: seriesUnder(SERIES),
};
