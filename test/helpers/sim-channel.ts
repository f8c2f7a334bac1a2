/** A probe channel to one simulated GPU of a model, and the compute strategy run on one, for tests that drive strategies by hand. */
import { COMPUTE_STRATEGY } from '../../server/discovery/strategies/compute.js';
import { ProbeSession } from '../../server/discovery/probe-session.js';
import type { ProbeChannel } from '../../server/gpu/backend.js';
import type { HelloResult } from '../../server/protocol/ops.js';
import { SimulatedBackend, type GpuModel } from '../../server/gpu/sim/index.js';
import type { ComputeTopology } from '../../server/model/compute-schema.js';

export type SimulatedProbeChannel = ProbeChannel & { simulatedDeviceSeconds(): number };

/** `thread`: the simulated GPU computes on a thread of its own (for strategies whose walks are long under coverage). */
export async function openSimulated(model: GpuModel, seed: number, options: { thread?: boolean } = {}): Promise<SimulatedProbeChannel> {
  const backend = new SimulatedBackend({ models: [model.id], seed, thread: options.thread ?? false });
  const [gpu] = await backend.listDevices();
  return (await backend.open(gpu!)) as SimulatedProbeChannel;
}

/** Only the compute strategy, after hello and calibrate, as discovery runs it; returns its built section and the session. */
export async function measureCompute(channel: ProbeChannel): Promise<{ compute: ComputeTopology; session: ProbeSession }> {
  const session = new ProbeSession(channel, undefined, undefined);
  const hello = await session.request('hello', 'hello', {});
  const calibration = await session.request('calibrate', 'calibrate', { samples: 1024 });
  const device = (hello as HelloResult).devices[0]!;
  await COMPUTE_STRATEGY.measure(session, device);
  const built = COMPUTE_STRATEGY.build(session.raw, device, calibration);
  return { compute: built.compute!, session };
}
