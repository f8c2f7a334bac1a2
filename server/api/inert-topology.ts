/**
 * A TopologyApi that knows no GPUs and never changes: the app built around it
 * is what the OpenAPI generator reads and what benchmarks override piecewise.
 */
import type { TopologyApi } from '../model/topology-api.js';

export function inertTopology(overrides: Partial<TopologyApi> = {}): TopologyApi {
  return {
    gpusEnumerated: true,
    listGpus: () => [],
    getGpu: () => null,
    getMigDevice: () => null,
    getTopology: () => ({ kind: 'unknown' }),
    requestProbe: () => ({ kind: 'unknown' }),
    reanalyse: async () => ({ kind: 'unknown' }),
    getJob: () => null,
    listJobs: () => [],
    listJobPage: () => ({ jobs: [], next: null }),
    subscribe: () => () => undefined,
    health: () => ({ ready: false, checks: {} }),
    ...overrides,
  };
}
