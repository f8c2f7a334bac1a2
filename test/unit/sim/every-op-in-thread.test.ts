/**
 * The tests that run whole simulated discoveries run the simulated GPU on a
 * thread of its own (SimulatedBackendOptions.thread). Here each op such a
 * discovery sends, with the args it first sent, is answered again on the
 * calling thread and on a thread of its own, from the same seed: the two
 * answers must be equal, so what the threaded GPU measured is what the
 * simulator computes.
 */
import { describe, expect, it } from 'vitest';
import type { ProbeChannel } from '../../../server/gpu/backend.js';
import { GPU_MODELS, SimulatedBackend } from '../../../server/gpu/sim/index.js';
import type { ProbeOp } from '../../../server/protocol/ops.js';
import { SHARED_H100_SEED, simulatedDiscovery, WHOLE_DISCOVERY_TIMEOUT_MS } from '../../helpers/simulated-discovery.js';

const H100 = GPU_MODELS['h100-sxm5-80gb']!;

async function open(thread: boolean): Promise<ProbeChannel> {
  const backend = new SimulatedBackend({ models: [H100.id], seed: 41, thread });
  const [gpu] = await backend.listDevices();
  return backend.open(gpu!);
}

describe("every op of a whole discovery, on the calling thread and on the simulated GPU's own", () => {
  it(
    'gets the same answer',
    async () => {
      const { firstRequests, sentOps } = await simulatedDiscovery({ model: H100.id, seed: SHARED_H100_SEED });
      const ops = Object.keys(firstRequests);
      expect(ops.sort()).toEqual([...new Set(sentOps)].sort());
      expect(ops.length).toBeGreaterThanOrEqual(10);
      const [inThread, threaded] = await Promise.all([open(false), open(true)]);
      try {
        for (const op of ops) {
          const args = firstRequests[op] as never;
          const [here, there] = await Promise.all([inThread.request(op as ProbeOp, args), threaded.request(op as ProbeOp, args)]);
          expect({ op, answer: there }).toEqual({ op, answer: here });
        }
      } finally {
        await Promise.all([inThread.close(), threaded.close()]);
      }
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );
});
