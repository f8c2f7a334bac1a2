import { Interference } from './interference.js';
import type { GpuModel } from './model.js';
import { mixSeed, Prng } from './prng.js';
import { SimulatedDevice } from './simulated-device.js';
import { SimulatedProbe, type SimulatedDeviceIdentity } from './simulated-probe.js';

/** Everything a simulated probe is built from: plain data, so a worker thread can build the same probe. */
export interface SimulatedProbeRecipe {
  /** Plain data (a registered model or a test's variant), cloned into a worker as it is. */
  model: GpuModel;
  /** The device's seed (the tenant's stream is derived from it). */
  seed: number;
  /** The tenant's intensity, 0..1; 0: an idle GPU. */
  intensity: number;
  identity: SimulatedDeviceIdentity;
}

/** Keeps the tenant's random stream apart from the device's, so an idle device draws exactly what it always did. */
const INTERFERENCE_SEED_SALT = 0x7e4a17;

export function buildSimulatedProbe(recipe: SimulatedProbeRecipe): SimulatedProbe {
  const { model } = recipe;
  const interference =
    recipe.intensity > 0 ? new Interference(recipe.intensity, model, new Prng(mixSeed(recipe.seed, INTERFERENCE_SEED_SALT))) : null;
  return new SimulatedProbe(new SimulatedDevice(model, new Prng(recipe.seed), interference), recipe.identity);
}
