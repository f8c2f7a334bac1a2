import type { DeviceProperties, L2PartitionResult } from '../../protocol/ops.js';
import type { WorkSlicer } from './chase.js';
import type { SimulatedDevice } from './simulated-device.js';
import { validateL2Partition } from '../../protocol/validate.js';

/**
 * l2.partition as the native probe runs it (native/probe/src/l2-partition.cu):
 * one block per SM, each touching a chunk (`.cg`, untimed) and then timing a
 * second load of it, chunk by chunk; in shared mode every SM reads one array
 * and block b starts at chunk b × chunks / blocks. The SMs run one after
 * another here (the L2 state they leave each other is the same either way for
 * this walk: every timed load follows its own touch). Blocks are reported in
 * SM order. The launch takes as long as its slowest SM.
 */
export async function simulateL2Partition(
  device: SimulatedDevice,
  properties: DeviceProperties,
  raw: unknown,
  slicer: WorkSlicer,
): Promise<L2PartitionResult> {
  const args = validateL2Partition(raw, properties);
  const blocks = properties.multiprocessorCount;
  const chunks = Math.floor(args.arrayBytes / args.strideBytes);
  const shared = args.mode === 'shared';
  const base = device.allocate(shared ? args.arrayBytes : args.arrayBytes * blocks);
  device.startLaunch(
    Array.from({ length: blocks }, (_, smId) => smId),
    device.l1CapacityOf(0),
  );
  const sms: L2PartitionResult['sms'] = [];
  let slowestCycles = 0;
  for (let smId = 0; smId < blocks; smId += 1) {
    const arrayBase = shared ? base : base + smId * args.arrayBytes;
    const first = shared ? Math.floor((smId * chunks) / blocks) : 0;
    const latenciesCycles = new Array<number>(chunks);
    let cycles = 0;
    for (let k = 0; k < chunks; k += 1) {
      const chunk = (first + k) % chunks;
      const address = arrayBase + chunk * args.strideBytes;
      cycles += device.load(smId, 'global.cg', address);
      const latency = device.load(smId, 'global.cg', address);
      cycles += latency;
      latenciesCycles[chunk] = device.observe(latency);
    }
    slowestCycles = Math.max(slowestCycles, cycles);
    sms.push({ smId, latenciesCycles });
    await slicer.pause();
  }
  device.addSeconds(device.model.launchOverheadS + slowestCycles / device.model.clock.smClockHz);
  return { mode: args.mode, arrayBytes: args.arrayBytes, strideBytes: args.strideBytes, sms };
}
