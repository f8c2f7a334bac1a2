import { ERROR_CODES } from '../../errors.js';
import type { GpuIdentity } from '../../model/gpu.js';
import type { MeasurementBackend, ProbeChannel } from '../backend.js';
import { ProbeError } from '../../protocol/probe-error.js';
import { validateIntensity } from './interference.js';
import type { GpuModel } from './model.js';
import { GPU_MODELS, modelById, modelForDeviceName } from './models/index.js';
import { buildSimulatedProbe, type SimulatedProbeRecipe } from './probe-recipe.js';
import { mixSeed, randomSeed } from './prng.js';
import { SimulatedChannel } from './simulated-channel.js';
import { SIM_PROBE_VERSION, type SimulatedProbe } from './simulated-probe.js';
import { ThreadedSimulatedChannel } from './threaded-channel.js';
import { simulatedGpuUuid } from './uuid.js';

export type { GpuModel } from './model.js';
export type { InterferenceOptions } from './interference.js';
export { GPU_MODELS, modelById, modelForDeviceName } from './models/index.js';
export { CHASE_KERNEL_STATIC_SHARED_BYTES, carveoutBytes, chaseLaunch, l1CapacityBytes, type ChaseLaunch } from './launch.js';
export { SIM_PROBE_VERSION, SimulatedProbe } from './simulated-probe.js';
export { SimulatedChannel } from './simulated-channel.js';
export { ThreadedSimulatedChannel } from './threaded-channel.js';
export { SimulatedDevice } from './simulated-device.js';
export { simulatedGpuUuid } from './uuid.js';

export const SIM_DRIVER_VERSION = 'sim-1.0';

export interface SimulatedBackendOptions {
  /** One simulated GPU per entry, e.g. ['h100-sxm5-80gb']. */
  models: string[];
  driverVersion?: string;
  /** Same seed, same measurements; without one every run differs. */
  seed?: number;
  /**
   * Another tenant's intensity, 0..1 (./interference.ts), on every GPU whose
   * model id names none; 0 or absent: an idle GPU. A model id may carry its
   * own as a suffix in percent: "h100-sxm5-80gb-busy50" (so TOPOD_SIM_MODEL
   * can ask for a busy simulated GPU).
   */
  interference?: number;
  /**
   * Each opened GPU computes on a worker thread of its own (./threaded-channel.ts)
   * instead of the caller's: for callers whose own thread is costly to run
   * the simulator on (tests under coverage instrumentation). Same seed, same values.
   */
  thread?: boolean;
}

/** A simulated GPU's running totals, as SimulatedProbe and ThreadedSimulatedChannel both give them. */
type DeviceCounter = Pick<SimulatedProbe, 'simulatedDeviceSeconds' | 'loadCount'>;

/** "<model id>-busy<percent>": that model with a tenant at that intensity. */
const BUSY_SUFFIX = /^(.+)-busy(\d{1,3})$/;

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
  /** The tenant's intensity on each of `models`. */
  private readonly intensities: number[];
  private readonly driverVersion: string;
  private readonly seed: number | undefined;
  private opened = 0;
  /**
   * What counts each open channel's totals (its probe, or the threaded channel that mirrors its thread's probe);
   * a closed channel's totals move to `closedTotals` so its device (and caches) can be freed.
   */
  private readonly openCounters = new Set<DeviceCounter>();
  private readonly thread: boolean;
  private readonly closedTotals = { seconds: 0, loads: 0 };

  constructor(options: SimulatedBackendOptions) {
    const fallbackIntensity = intensityOption(options.interference);
    const parsed = options.models.map((id) => parseModelId(id, fallbackIntensity));
    this.models = parsed.map((entry) => entry.model);
    this.intensities = parsed.map((entry) => entry.intensity);
    this.driverVersion = options.driverVersion ?? SIM_DRIVER_VERSION;
    this.seed = options.seed;
    this.thread = options.thread ?? false;
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

  /**
   * Own GPUs by UUID; any other GPU (fake NVML) by its name, preferring a configured model of its family
   * (TOPOD_SIM_MODEL=h100-l2-8mib simulates NVML's H100s with the stand-in).
   */
  async open(gpu: GpuIdentity): Promise<ProbeChannel> {
    const ownIndex = this.models.findIndex((model, index) => simulatedGpuUuid(model.id, index) === gpu.uuid);
    const model = this.models[ownIndex] ?? modelForDeviceName(gpu.name, this.models);
    const configuredIndex = ownIndex >= 0 ? ownIndex : this.models.indexOf(model as GpuModel);
    const intensity = this.intensities[configuredIndex] ?? this.intensities[0] ?? 0;
    if (!model) {
      throw new ProbeError(
        'unsupported',
        `no simulated model matches GPU "${gpu.name}" (${gpu.uuid}); known: ${Object.keys(GPU_MODELS).join(', ')}`,
      );
    }
    this.opened += 1;
    const recipe: SimulatedProbeRecipe = {
      model,
      seed: this.seed === undefined ? randomSeed() : mixSeed(this.seed, gpu.index, this.opened),
      intensity,
      identity: { index: gpu.index, uuid: gpu.uuid, name: gpu.name, pciBusId: gpu.pciBusId },
    };
    if (this.thread) {
      const channel: ThreadedSimulatedChannel = new ThreadedSimulatedChannel(recipe, () => this.retire(channel));
      this.openCounters.add(channel);
      return channel;
    }
    const probe = buildSimulatedProbe(recipe);
    this.openCounters.add(probe);
    return new SimulatedChannel(probe, () => this.retire(probe));
  }

  /** A channel closed: its totals are kept, its counter (and the device behind it) let go. */
  private retire(counter: DeviceCounter): void {
    if (!this.openCounters.delete(counter)) return;
    this.closedTotals.seconds += counter.simulatedDeviceSeconds();
    this.closedTotals.loads += counter.loadCount();
  }

  /**
   * Simulated GPU time of every channel this backend opened: each load's true
   * latency at the model's clock (warm-ups included; a batch's chasers run at
   * once), a launch overhead per kernel, L2 flushes and bandwidth runs as
   * modelled. For benchmarks: what the same ops would cost on the GPU.
   */
  simulatedDeviceSeconds(): number {
    return [...this.openCounters].reduce((sum, counter) => sum + counter.simulatedDeviceSeconds(), this.closedTotals.seconds);
  }

  /** Channels opened and not closed yet (each holds a simulated device with its caches). */
  get openChannelCount(): number {
    return this.openCounters.size;
  }

  /** Loads walked on every channel this backend opened, warm-ups included. */
  loadCount(): number {
    return [...this.openCounters].reduce((sum, counter) => sum + counter.loadCount(), this.closedTotals.loads);
  }

  async close(): Promise<void> {}
}

function intensityOption(intensity: number | undefined): number {
  if (intensity === undefined) return 0;
  try {
    return validateIntensity(intensity, "the simulated backend's interference");
  } catch (error) {
    throw new SimulatorConfigError((error as Error).message);
  }
}

function parseModelId(id: string, fallbackIntensity: number): { model: GpuModel; intensity: number } {
  const busy = BUSY_SUFFIX.exec(id);
  const modelId = busy ? busy[1]! : id;
  const model = modelById(modelId);
  if (!model)
    throw new SimulatorConfigError(
      `unknown simulated GPU model "${modelId}" (known: ${Object.keys(GPU_MODELS).join(', ')}; "<model>-busy<percent>" adds a tenant)`,
    );
  if (!busy) return { model, intensity: fallbackIntensity };
  const percent = Number(busy[2]);
  if (percent > 100) throw new SimulatorConfigError(`simulated GPU model "${id}": the tenant's intensity is a percentage, 0 to 100`);
  return { model, intensity: percent / 100 };
}

function simulatedPciBusId(index: number): string {
  return `00000000:${((0x18 + index * 0x10) % 0x100).toString(16).padStart(2, '0').toUpperCase()}:00.0`;
}
