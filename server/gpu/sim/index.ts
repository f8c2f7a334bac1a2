import { ERROR_CODES } from '../../errors.js';
import type { GpuIdentity } from '../../model/gpu.js';
import { ProbeError, type MeasurementBackend, type ProbeChannel } from '../backend.js';
import type { GpuModel } from './model.js';
import { GPU_MODELS, modelById, modelForDeviceName } from './models/index.js';
import { mixSeed, Prng, randomSeed } from './prng.js';
import { SimulatedChannel } from './simulated-channel.js';
import { SimulatedDevice } from './simulated-device.js';
import { SIM_PROBE_VERSION, SimulatedProbe, type SimulatedDeviceIdentity } from './simulated-probe.js';
import { simulatedGpuUuid } from './uuid.js';

export type { GpuModel } from './model.js';
export { GPU_MODELS, modelById, modelForDeviceName } from './models/index.js';
export { CHASE_KERNEL_STATIC_SHARED_BYTES, carveoutBytes, chaseLaunch, l1CapacityBytes, type ChaseLaunch } from './launch.js';
export { SIM_PROBE_VERSION, SimulatedProbe } from './simulated-probe.js';
export { SimulatedChannel } from './simulated-channel.js';
export { SimulatedDevice } from './simulated-device.js';
export { simulatedGpuUuid } from './uuid.js';

export const SIM_DRIVER_VERSION = 'sim-1.0';

export interface SimulatedBackendOptions {
  /** One simulated GPU per entry, e.g. ['h100-sxm5-80gb']. */
  models: string[];
  driverVersion?: string;
  /** Same seed, same measurements; without one every run differs. */
  seed?: number;
}

/** Raised for a simulator configuration that cannot work (an unknown model id). */
export class SimulatorConfigError extends Error {
  readonly code = ERROR_CODES.SIM_CONFIG;

  constructor(message: string) {
    super(message);
    this.name = 'SimulatorConfigError';
  }
}

export class SimulatedBackend implements MeasurementBackend {
  readonly kind = 'sim' as const;
  readonly simulated = true;
  readonly probeVersion = SIM_PROBE_VERSION;
  private readonly models: GpuModel[];
  private readonly driverVersion: string;
  private readonly seed: number | undefined;
  private opened = 0;
  /** Probes of open channels; a closed channel's totals move to `closedTotals` so its device (and caches) can be freed. */
  private readonly openProbes = new Set<SimulatedProbe>();
  private readonly closedTotals = { seconds: 0, loads: 0 };

  constructor(options: SimulatedBackendOptions) {
    this.models = options.models.map((id) => {
      const model = modelById(id);
      if (!model) throw new SimulatorConfigError(`unknown simulated GPU model "${id}" (known: ${Object.keys(GPU_MODELS).join(', ')})`);
      return model;
    });
    this.driverVersion = options.driverVersion ?? SIM_DRIVER_VERSION;
    this.seed = options.seed;
  }

  async listDevices(): Promise<GpuIdentity[]> {
    return this.models.map((model, index) => ({
      uuid: simulatedGpuUuid(model.id, index),
      index,
      name: model.name,
      vendor: 'nvidia',
      pciBusId: simulatedPciBusId(index),
      driverVersion: this.driverVersion,
    }));
  }

  /** Own GPUs by UUID; any other GPU (fake NVML) by its name. */
  async open(gpu: GpuIdentity): Promise<ProbeChannel> {
    const ownIndex = this.models.findIndex((model, index) => simulatedGpuUuid(model.id, index) === gpu.uuid);
    const model = this.models[ownIndex] ?? modelForDeviceName(gpu.name);
    if (!model) {
      throw new ProbeError('unsupported', `no simulated model matches GPU "${gpu.name}" (${gpu.uuid}); known: ${Object.keys(GPU_MODELS).join(', ')}`);
    }
    this.opened += 1;
    const seed = this.seed === undefined ? randomSeed() : mixSeed(this.seed, gpu.index, this.opened);
    const identity: SimulatedDeviceIdentity = { index: gpu.index, uuid: gpu.uuid, name: gpu.name, pciBusId: gpu.pciBusId };
    const probe = new SimulatedProbe(new SimulatedDevice(model, new Prng(seed)), identity);
    this.openProbes.add(probe);
    return new SimulatedChannel(probe, () => {
      if (!this.openProbes.delete(probe)) return;
      this.closedTotals.seconds += probe.simulatedDeviceSeconds();
      this.closedTotals.loads += probe.loadCount();
    });
  }

  /**
   * Simulated GPU time of every channel this backend opened: each load's true
   * latency at the model's clock (warm-ups included; a batch's chasers run at
   * once), a launch overhead per kernel, L2 flushes and bandwidth runs as
   * modelled. For benchmarks: what the same ops would cost on the GPU.
   */
  simulatedDeviceSeconds(): number {
    return [...this.openProbes].reduce((sum, probe) => sum + probe.simulatedDeviceSeconds(), this.closedTotals.seconds);
  }

  /** Channels opened and not closed yet (each holds a simulated device with its caches). */
  get openChannelCount(): number {
    return this.openProbes.size;
  }

  /** Loads walked on every channel this backend opened, warm-ups included. */
  loadCount(): number {
    return [...this.openProbes].reduce((sum, probe) => sum + probe.loadCount(), this.closedTotals.loads);
  }

  async close(): Promise<void> {}
}

function simulatedPciBusId(index: number): string {
  return `00000000:${((0x18 + index * 0x10) % 0x100).toString(16).padStart(2, '0').toUpperCase()}:00.0`;
}
