/**
 * Whole simulated discoveries, each computed once per test run and read by
 * every test file that asks for the same one (test/helpers/run-cache.ts).
 * A full H100 discovery costs tens of CPU seconds (almost all in the
 * simulator); before, 22 of them ran in test/unit/discovery alone, most of
 * them the same H100 with another seed.
 *
 * Ask for one by model, seed, `only` and the ops its probe hides from hello
 * (an older probe, or one lacking ops); what the tests read of the run comes
 * back with it: the outcome, the progress it reported, the ops it sent and
 * the simulated GPU time it took.
 */
import { discover } from '../../server/discovery/index.js';
import type { ProbeChannel } from '../../server/gpu/backend.js';
import type { HelloResult } from '../../server/protocol/ops.js';
import { SimulatedBackend } from '../../server/gpu/sim/index.js';
import type { DiscoveryOutcome, ElementName } from '../../server/model/document.js';
import type { GpuIdentity } from '../../server/model/gpu.js';
import { sharedOnce } from './run-cache.js';

/** The seed of the simulated H100 that the faces' documents, the registry's and the compute tests share. */
export const SHARED_H100_SEED = 3;

export interface SimulatedDiscoveryRequest {
  /** A simulator model id, e.g. 'h100-sxm5-80gb'. */
  model: string;
  seed: number;
  /** Elements asked for (discover's `only`); absent: everything. */
  only?: ElementName[];
  /** Ops removed from the probe's hello (discovery must skip the strategies needing them and never send them). */
  hiddenOps?: string[];
}

export interface SimulatedDiscovery {
  outcome: DiscoveryOutcome;
  /** Every onProgress call, in order: [phase, fraction]. */
  progress: Array<[string, number]>;
  /** Every op sent to the probe, in order. */
  sentOps: string[];
  /** The first request of each op sent, as sent: op → args. */
  firstRequests: Record<string, unknown>;
  /** Simulated GPU time of the discovery (what the same ops would take on the GPU). */
  simulatedDeviceSeconds: number;
  gpu: GpuIdentity;
  probeVersion: string;
  startedAt: Date;
  finishedAt: Date;
}

function keyOf(request: SimulatedDiscoveryRequest): string {
  const only = request.only ? [...request.only].join('+') : 'all';
  const hidden = request.hiddenOps?.length ? `-without-${request.hiddenOps.join('+')}` : '';
  return `discovery-${request.model}-seed${request.seed}-${only}${hidden}`;
}

/** A channel that hides `hiddenOps` from hello and records every op it is sent, and each op's first args. */
function recording(
  channel: ProbeChannel,
  hiddenOps: readonly string[],
  sentOps: string[],
  firstRequests: Record<string, unknown>,
): ProbeChannel {
  return {
    request: async (op, args, options) => {
      sentOps.push(op);
      if (!Object.hasOwn(firstRequests, op)) firstRequests[op] = structuredClone(args);
      const result = await channel.request(op, args, options);
      if (op !== 'hello' || hiddenOps.length === 0) return result;
      const hello = result as HelloResult;
      return { ...hello, ops: hello.ops.filter((known) => !hiddenOps.includes(known)) } as typeof result;
    },
    close: () => channel.close(),
  };
}

async function run(request: SimulatedDiscoveryRequest): Promise<SimulatedDiscovery> {
  const backend = new SimulatedBackend({ models: [request.model], seed: request.seed, thread: true });
  const [gpu] = await backend.listDevices();
  if (!gpu) throw new Error(`the simulator listed no GPU for ${request.model}`);
  const progress: Array<[string, number]> = [];
  const sentOps: string[] = [];
  const firstRequests: Record<string, unknown> = {};
  const channel = recording(await backend.open(gpu), request.hiddenOps ?? [], sentOps, firstRequests);
  const startedAt = new Date();
  const outcome = await discover(channel, {
    ...(request.only ? { only: request.only } : {}),
    onProgress: (phase, fraction) => progress.push([phase, fraction]),
  });
  const finishedAt = new Date();
  const simulatedDeviceSeconds = backend.simulatedDeviceSeconds();
  await channel.close();
  await backend.close();
  return {
    outcome,
    progress,
    sentOps,
    firstRequests,
    simulatedDeviceSeconds,
    gpu,
    probeVersion: backend.probeVersion,
    startedAt,
    finishedAt,
  };
}

/** The discovery `request` names, run once per test run (each call gets its own copy). */
export function simulatedDiscovery(request: SimulatedDiscoveryRequest): Promise<SimulatedDiscovery> {
  return sharedOnce(keyOf(request), () => run(request));
}

/** Room for a test that runs or waits for whole simulated discoveries on a busy 2-core machine (each takes ~20 s alone). */
export const WHOLE_DISCOVERY_TIMEOUT_MS = 300_000;
