/**
 * The real NVML on a GPU machine. Skipped where there is no NVIDIA GPU.
 * Checks the addon against nvidia-smi and, where nvml.h is installed, the
 * declared struct layouts against the real header.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { NvmlSource } from '../../server/dynamic/nvml-source.js';
import type { DynamicSnapshot } from '../../server/dynamic/types.js';
import { buildMigView } from '../../server/topology/mig.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const hasGpu = existsSync('/dev/nvidia0') || spawnSync('nvidia-smi', ['-L'], { stdio: 'ignore' }).status === 0;
const nvmlHeader = [process.env.TOPOD_NVML_INCLUDE, '/usr/local/cuda/include', '/usr/include'].find(
  (dir) => dir && existsSync(path.join(dir, 'nvml.h')),
);

interface SmiRow {
  uuid: string;
  driverVersion: string;
  migModeCurrent: string;
}

/** PIDs of compute processes per GPU UUID, as nvidia-smi lists them. */
function smiComputePids(): Map<string, number[]> {
  const out = execFileSync('nvidia-smi', ['--query-compute-apps=gpu_uuid,pid', '--format=csv,noheader'], { encoding: 'utf8' });
  const byGpu = new Map<string, number[]>();
  for (const line of out
    .trim()
    .split('\n')
    .filter((l) => l.includes(','))) {
    const [uuid = '', pid = ''] = line.split(',').map((field) => field.trim());
    byGpu.set(uuid, [...(byGpu.get(uuid) ?? []), Number(pid)]);
  }
  return byGpu;
}

function nvidiaSmi(): SmiRow[] {
  const out = execFileSync('nvidia-smi', ['--query-gpu=uuid,driver_version,mig.mode.current', '--format=csv,noheader'], {
    encoding: 'utf8',
  });
  return out
    .trim()
    .split('\n')
    .map((line) => {
      const [uuid = '', driverVersion = '', migModeCurrent = ''] = line.split(',').map((field) => field.trim());
      return { uuid, driverVersion, migModeCurrent };
    });
}

describe.skipIf(!hasGpu)(hasGpu ? 'real NVML' : 'real NVML (skipped: no /dev/nvidia0 and no nvidia-smi here)', () => {
  // The system libnvidia-ml, whatever TOPOD_NVML_LIB says elsewhere in the environment.
  const source = new NvmlSource({ libraryPath: 'libnvidia-ml.so.1' });
  let snapshot: DynamicSnapshot;
  afterAll(() => source.close());

  it('reads the GPUs nvidia-smi lists, with the same driver and MIG mode', async () => {
    snapshot = await source.read();
    console.log(`[gpu] NVML read ${source.lastRead?.durationMs.toFixed(1)} ms (native ${source.lastRead?.nativeMs.toFixed(1)} ms)`);
    expect(snapshot.available, snapshot.reason ?? '').toBe(true);
    const smi = nvidiaSmi();
    expect(snapshot.devices.map((d) => d.uuid)).toEqual(smi.map((row) => row.uuid));
    expect(snapshot.driverVersion).toBe(smi[0]?.driverVersion);
    expect(snapshot.driverVersion).toMatch(/^580\./);
    for (const [index, device] of snapshot.devices.entries()) {
      const smiMode = smi[index]?.migModeCurrent;
      expect(device.uuid).toMatch(/^GPU-/);
      expect(device.mig.mode?.current === 1 ? 'Enabled' : 'Disabled').toBe(smiMode);
    }
  });

  it("reads each GPU's activity: sane figures, and the compute processes nvidia-smi lists", async () => {
    const smiPids = smiComputePids();
    for (const device of snapshot.devices) {
      const { activity, reason } = await source.readActivity(device.uuid, { windowMs: 1000 });
      expect(activity, reason ?? '').not.toBeNull();
      if (!activity) continue;
      console.log(`[gpu] activity ${device.uuid}: ${JSON.stringify({ ...activity, processes: activity.processes.length })}`);
      expect(activity.gpuUuid).toBe(device.uuid);
      expect(activity.processListsRead.compute).toBe(true);
      for (const process of activity.processes) {
        expect(process.pid).toBeGreaterThan(0);
        expect(['compute', 'graphics']).toContain(process.kind);
      }
      // nvidia-smi asked first: a process it saw is still there, barring one that exits in between.
      const computePids = activity.processes.filter((p) => p.kind === 'compute').map((p) => p.pid);
      for (const pid of smiPids.get(device.uuid) ?? []) expect(computePids).toContain(pid);
      if (activity.utilization) {
        expect(activity.utilization.maxPercent).toBeGreaterThanOrEqual(activity.utilization.meanPercent);
        expect(activity.utilization.maxPercent).toBeLessThanOrEqual(100);
        expect(activity.utilization.sampleCount).toBeGreaterThan(0);
      } else {
        expect(activity.migEnabled).toBe(true);
      }
      expect(activity.temperatureC).toBeGreaterThan(0);
      expect(activity.temperatureC).toBeLessThan(120);
      expect(activity.powerWatts).toBeGreaterThan(0);
      expect(activity.smClockMHz).toBeGreaterThan(0);
      expect(activity.smClockMHz).toBeLessThanOrEqual(activity.maxSmClockMHz ?? 0);
      expect(activity.maxSmClockMHz).toBe(device.maxClocks.smMHz);
      for (const name of activity.clocksEventReasons ?? []) expect(name).toMatch(/^[a-z-]+$|^bit-\d+$/);
      expect(typeof activity.persistenceMode).toBe('boolean');
      expect(typeof activity.eccModeCurrent).toBe('boolean');
      expect(activity.memory?.totalBytes).toBe(device.memory?.totalBytes);
    }
  });

  it('sees MIG disabled and the seven GPU-instance profiles with their SM counts', () => {
    const device = snapshot.devices[0];
    expect(device).toBeDefined();
    if (!device) return;
    console.log(`[gpu] ${device.name}: ${device.mig.profiles.map((p) => `${p.id} ${p.name} ${p.multiprocessorCount} SMs`).join('; ')}`);
    console.log(`[gpu] degraded: ${JSON.stringify(device.degraded)}`);
    expect(device.mig.mode?.current).toBe(0);
    expect(device.mig.instances).toEqual([]);
    expect(device.mig.profiles).toHaveLength(7);
    for (const profile of device.mig.profiles) {
      expect(profile.multiprocessorCount).toBeGreaterThan(0);
      expect(profile.memorySizeBytes).toBeGreaterThan(0);
      expect(profile.name).toMatch(/^MIG \dg\./);
    }
    const full = [...device.mig.profiles].sort((a, b) => b.sliceCount - a.sliceCount)[0];
    expect(full?.sliceCount).toBe(7);
  });

  it('gives each profile an L2 share within the GPU, the whole L2 to the full profile', () => {
    const device = snapshot.devices[0];
    if (!device) return;
    const l2SizeBytes = 1 << 20; // any size: the check is about slice arithmetic on real profiles
    const view = buildMigView({ device, l2SizeBytes, l2SegmentBytes: null });
    const full = view.profiles.find((p) => p.sliceCount === 7);
    expect(full?.l2.bytes).toBe(l2SizeBytes);
    expect(view.memorySliceCount).toBeGreaterThanOrEqual(7);
    for (const profile of view.profiles) {
      expect(profile.l2.memorySlices).toBeGreaterThanOrEqual(1);
      expect(profile.l2.memorySlices).toBeLessThanOrEqual(view.memorySliceCount ?? 0);
    }
  });
});

describe.skipIf(!hasGpu || !nvmlHeader)(
  hasGpu && nvmlHeader
    ? `nvml-subset.h against the real ${nvmlHeader}/nvml.h`
    : 'nvml-subset.h against the real nvml.h (skipped: needs a GPU machine with nvml.h)',
  () => {
    it('matches every declared size, offset, version word and constant', () => {
      const result = spawnSync(process.execPath, [path.join(ROOT, 'scripts/build-native.mjs'), 'layout-check'], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, TOPOD_NVML_INCLUDE: nvmlHeader },
      });
      console.log(result.stdout);
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout).toContain('PASS: 0 mismatch(es)');
    });
  },
);
