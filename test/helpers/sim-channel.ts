/** A probe channel to one simulated GPU of a model, for tests that drive strategies by hand. */
import type { ProbeChannel } from '../../server/gpu/backend.js';
import { SimulatedBackend, type GpuModel } from '../../server/gpu/sim/index.js';

export type SimulatedProbeChannel = ProbeChannel & { simulatedDeviceSeconds(): number };

export async function openSimulated(model: GpuModel, seed: number): Promise<SimulatedProbeChannel> {
  const backend = new SimulatedBackend({ models: [model.id], seed });
  const [gpu] = await backend.listDevices();
  return (await backend.open(gpu!)) as SimulatedProbeChannel;
}
