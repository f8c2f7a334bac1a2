import type { GpuIdentity } from '../model/gpu.js';
import type { MeasurementBackend, ProbeChannel } from './backend.js';
import type { ChaseLaunchArgs, ChaserSpec, ProbeOp } from '../protocol/ops.js';

/** The chase ops whose launches take a carveout preference. */
const CHASE_OPS: ReadonlySet<ProbeOp> = new Set(['pchase', 'pchase.batch', 'pchase.pair', 'selftest.consumer']);

/**
 * Measures under another L1/shared-memory split than the default (as much L1
 * as possible, TOPOD_CARVEOUT_PERCENT=0). Every chase launch that does not
 * name a carveout and keeps its chains out of shared memory asks for
 * `percent`; the L1, texture and read-only sizes then hold for that split,
 * and the document's `carveout` records it. Results measured so are a cache
 * key of their own: the probe version gains "+carveout<percent>", so a result
 * of another split is never served as current (issue 8).
 */
export function withCarveoutPreference(backend: MeasurementBackend, percent: number): MeasurementBackend {
  if (percent === 0) return backend;
  const wrapped: MeasurementBackend = {
    kind: backend.kind,
    simulated: backend.simulated,
    probeVersion: `${backend.probeVersion}+carveout${percent}`,
    listDevices: () => backend.listDevices(),
    open: async (gpu: GpuIdentity) => preferring(await backend.open(gpu), percent),
    close: () => backend.close(),
  };
  if (backend.health) wrapped.health = () => backend.health!();
  return wrapped;
}

function preferring(channel: ProbeChannel, percent: number): ProbeChannel {
  return {
    request: (op, args, options) =>
      channel.request(op, CHASE_OPS.has(op) ? (withPreference(args as ChaseRequestArgs, percent) as typeof args) : args, options),
    close: () => channel.close(),
  };
}

type ChaseRequestArgs = ChaseLaunchArgs & { space?: string; first?: ChaserSpec; second?: ChaserSpec };

function withPreference(args: ChaseRequestArgs, percent: number): ChaseRequestArgs {
  const usesShared = args.space === 'shared' || args.first?.space === 'shared' || args.second?.space === 'shared';
  if (args.carveoutPercent !== undefined || usesShared) return args;
  return { ...args, carveoutPercent: percent };
}
