/**
 * The cost of one NVML refresh, per device: what the poller pays every
 * TOPOD_POLL_MS. Reads through the same NvmlSource the daemon uses — the
 * system's libnvidia-ml, or TOPOD_NVML_LIB (the fake library on a machine
 * without a driver, which is said in the output).
 */
import { projectRoot } from '../server/paths.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { median, percentile } from '../server/analysis/index.js';
import { NvmlSource } from '../server/dynamic/nvml-source.js';

const ROOT = projectRoot();
const FAKE = path.join(ROOT, 'native/fake-nvml/build/libnvidia-ml.so.1');

export interface NvmlRefreshFigures {
  library: string;
  reads: number;
  devices: number;
  wholeReadMedianMs: number;
  wholeReadP95Ms: number;
  perDeviceMedianMs: number;
}

async function measure(libraryPath: string | null, reads: number): Promise<NvmlRefreshFigures | null> {
  const source = new NvmlSource({ libraryPath });
  try {
    const first = await source.read();
    if (!first.available) return null;
    const whole: number[] = [];
    const perDevice: number[] = [];
    for (let i = 0; i < reads; i++) {
      await source.read();
      const stats = source.lastRead;
      if (!stats) continue;
      whole.push(stats.durationMs);
      for (const device of stats.perDevice) perDevice.push(device.ms);
    }
    return {
      library: source.lastRead?.libraryPath ?? libraryPath ?? 'libnvidia-ml.so.1',
      reads,
      devices: first.devices.length,
      wholeReadMedianMs: median(whole),
      wholeReadP95Ms: percentile(whole, 95),
      perDeviceMedianMs: median(perDevice),
    };
  } finally {
    await source.close();
  }
}

/** Real NVML when it answers; else the fake library with a scenario, labelled as such. */
export async function nvmlRefreshCost(
  reads = 200,
): Promise<{ label: string; figures: NvmlRefreshFigures } | { label: string; figures: null }> {
  const real = await measure(process.env.TOPOD_NVML_LIB ?? null, reads);
  if (real) return { label: `NVML (${real.library})`, figures: real };
  if (!existsSync(FAKE)) return { label: 'no NVML and no fake library built', figures: null };
  process.env.TOPOD_FAKE_NVML_SCENARIO ??= path.join(ROOT, 'test/fixtures/nvml/h100-80gb-mig-mixed.json');
  const fake = await measure(FAKE, reads);
  return {
    label: `FAKE NVML (no driver here; ${path.relative(ROOT, process.env.TOPOD_FAKE_NVML_SCENARIO)}) — addon overhead only`,
    figures: fake,
  };
}
