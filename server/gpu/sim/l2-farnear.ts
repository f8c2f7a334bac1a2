import type { DeviceProperties, L2FarnearResult, L2PersistResult } from '../../protocol/ops.js';
import type { WorkSlicer } from './chase.js';
import { hash32, type SimulatedDevice } from './simulated-device.js';
import { FARNEAR_LINE_BYTES } from '../../protocol/limits.js';
import { validateL2Farnear, validateL2Persist } from '../../protocol/validate.js';

/**
 * l2.farnear as the native probe runs it (native/probe/src/l2-farnear.cu):
 * each pass touches every 128 B line with a `.cg` load, the first line of
 * each chunk timed on the last pass; the chosen SMs take turns (private: all
 * of one SM's passes, then the next SM's; shared: every SM's warm passes in
 * turn, then every SM's timed pass in turn). The L2 model decides each
 * load: near or far hit, a far-partition hit past the near copy, near or far
 * device memory, and in shared mode the copies both groups keep.
 */
export async function simulateL2Farnear(
  device: SimulatedDevice,
  properties: DeviceProperties,
  raw: unknown,
  slicer: WorkSlicer,
): Promise<L2FarnearResult> {
  const args = validateL2Farnear(raw, properties);
  const n = args.smIds.length;
  const chunks = Math.floor(args.arrayBytes / args.strideBytes);
  const lines = args.arrayBytes / FARNEAR_LINE_BYTES;
  const linesPerChunk = args.strideBytes / FARNEAR_LINE_BYTES;
  const base = device.allocate(args.shared ? args.arrayBytes : args.arrayBytes * n);
  device.startLaunch(args.smIds, device.l1CapacityOf(0));
  const steps: Array<{ role: number; timed: boolean }> = [];
  for (let role = 0; role < n; role += 1) {
    for (let pass = 0; pass < args.passes; pass += 1) steps.push({ role, timed: pass + 1 === args.passes });
  }
  if (args.shared) steps.sort((a, b) => Number(a.timed) - Number(b.timed)); // stable: warm passes in SM order, then the timed ones
  const latencies = args.smIds.map(() => new Array<number>(chunks).fill(0));
  let cycles = 0;
  for (const { role, timed } of steps) {
    const smId = args.smIds[role]!;
    const arrayBase = args.shared ? base : base + role * args.arrayBytes;
    for (let c = 0; c < chunks; c += 1) {
      const chunkBase = arrayBase + c * args.strideBytes;
      const first = device.load(smId, 'global.cg', chunkBase);
      if (timed) latencies[role]![c] = device.observe(first);
      let rest = 0;
      for (let l = 1; l < linesPerChunk; l += 1) rest = Math.max(rest, device.load(smId, 'global.cg', chunkBase + l * FARNEAR_LINE_BYTES));
      cycles += first + rest;
      if ((c & 255) === 255) await slicer.pause();
    }
    for (let l = chunks * linesPerChunk; l < lines; l += 1) device.load(smId, 'global.cg', arrayBase + l * FARNEAR_LINE_BYTES);
  }
  device.addSeconds(device.model.launchOverheadS + cycles / device.model.clock.smClockHz);
  const sms = args.smIds.map((smId, role) => ({ smId, latenciesCycles: latencies[role]! }));
  return { arrayBytes: args.arrayBytes, strideBytes: args.strideBytes, passes: args.passes, shared: args.shared, sms };
}

/**
 * l2.persist, modelled rather than walked (the native probe streams the array
 * twice per condition; walking that here would cost millions of loads). After
 * the stream the L2 holds the last segment's worth of the array (every
 * group's SMs read it, so each line is held in both partitions). With the
 * window, a window line is marked persisting with probability hitRatio (a
 * per-line hash) and survives while the marked bytes fit the granted
 * set-aside (min(windowBytes, persistingL2CacheMaxBytes)); past that a
 * matching share of them survives. Sampled loads are timed from SM 0: a
 * surviving line is a near or far hit by its home, a lost one near or far
 * device memory. The L2 ends flushed, as the stream leaves it.
 */
export function simulateL2Persist(device: SimulatedDevice, properties: DeviceProperties, raw: unknown): L2PersistResult {
  const args = validateL2Persist(raw, properties);
  const model = device.model;
  const granted = Math.min(args.windowBytes, properties.persistingL2CacheMaxBytes ?? 0);
  const keptShare = Math.min(1, granted / (args.windowBytes * args.hitRatio));
  const base = device.allocate(args.arrayBytes);
  const near = device.segmentOfSm(0);
  const latencyOf = (offset: number, hit: boolean) => {
    const far = device.homeSegment(base + offset) !== near;
    if (hit) return far && model.l2.farHomedHitsCostFar ? model.l2.farHitLatencyCycles : model.l2.nearHitLatencyCycles;
    return far ? model.deviceMemory.latencyCycles : (model.deviceMemory.nearLatencyCycles ?? model.deviceMemory.latencyCycles);
  };
  const withoutCycles: number[] = [];
  const withCycles: number[] = [];
  for (let i = 0; i < args.samples; i += 1) {
    const offset = Math.floor((i * args.windowBytes) / args.samples / FARNEAR_LINE_BYTES) * FARNEAR_LINE_BYTES;
    const streamedHit = args.arrayBytes - offset <= model.l2.segment.sizeBytes;
    const line = offset / FARNEAR_LINE_BYTES;
    const persisting = unit(hash32(line)) < args.hitRatio && unit(hash32(line ^ 0x5bd1e995)) < keptShare;
    withoutCycles.push(device.observe(latencyOf(offset, streamedHit)));
    withCycles.push(device.observe(latencyOf(offset, streamedHit || persisting)));
  }
  device.flushL2();
  device.addSeconds(2 * (model.launchOverheadS * 3 + (2 * args.arrayBytes) / model.deviceMemory.readBandwidthBytesPerS));
  return { ...args, persistingLimitBytes: granted, withoutCycles, withCycles };
}

function unit(h: number): number {
  return h / 2 ** 32;
}
