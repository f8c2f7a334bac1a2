import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { ProbeError } from '../backend.js';
import type { ChasePattern, MemorySpace } from '../protocol.js';
import { Prng } from './prng.js';
import type { SimulatedDevice } from './simulated-device.js';

/** One pointer-chase array: where it lives and in which order its elements are visited. */
export interface ChaseArray {
  baseAddress: number;
  strideBytes: number;
  elementCount: number;
  /** next[i] is the element visited after i (random pattern); null for sequential. */
  next: Int32Array | null;
}

export function createChaseArray(
  device: SimulatedDevice,
  spec: { arrayBytes: number; strideBytes: number; pattern?: ChasePattern | undefined; seed?: number | undefined },
): ChaseArray {
  const elementCount = Math.floor(spec.arrayBytes / spec.strideBytes);
  const next = spec.pattern === 'random' ? singleCyclePermutation(elementCount, new Prng(spec.seed ?? 0)) : null;
  return { baseAddress: device.allocate(spec.arrayBytes), strideBytes: spec.strideBytes, elementCount, next };
}

/** Sattolo's shuffle: a random permutation that is one cycle, so the chase visits every element. */
function singleCyclePermutation(count: number, rng: Prng): Int32Array {
  const order = new Int32Array(count);
  for (let i = 0; i < count; i += 1) order[i] = i;
  for (let i = count - 1; i > 0; i -= 1) {
    const j = rng.nextInt(i);
    const swap = order[i]!;
    order[i] = order[j]!;
    order[j] = swap;
  }
  const next = new Int32Array(count);
  for (let i = 0; i < count; i += 1) next[order[i]!] = order[(i + 1) % count]!;
  return next;
}

/**
 * Keeps the daemon responsive: work runs in slices of a few milliseconds with
 * a trip through the event loop between them, and stops when aborted.
 */
export class WorkSlicer {
  private sliceStart = performance.now();

  constructor(
    private readonly signal: AbortSignal | undefined,
    private readonly sliceMs = 8,
  ) {}

  async pause(): Promise<void> {
    if (performance.now() - this.sliceStart < this.sliceMs) return;
    await yieldToEventLoop();
    this.throwIfAborted();
    this.sliceStart = performance.now();
  }

  throwIfAborted(): void {
    if (!this.signal?.aborted) return;
    const reason: unknown = this.signal.reason;
    throw reason instanceof ProbeError ? reason : new ProbeError('cancelled', 'the request was cancelled');
  }
}

const LOADS_PER_BLOCK = 2048;

/**
 * One chaser walking `loads` elements from element 0 (a kernel starts its
 * chase at the array head each round). The observed latencies of the first
 * `recordCount` loads are returned.
 */
export async function walk(
  device: SimulatedDevice,
  smId: number,
  space: MemorySpace,
  array: ChaseArray,
  loads: number,
  slicer: WorkSlicer,
  recordCount = 0,
): Promise<number[]> {
  const recorded: number[] = [];
  let element = 0;
  let done = 0;
  while (done < loads) {
    const blockEnd = Math.min(loads, done + LOADS_PER_BLOCK);
    for (; done < blockEnd; done += 1) {
      const latency = device.loadLatencyCycles(smId, space, array.baseAddress + element * array.strideBytes);
      if (done < recordCount) recorded.push(device.observe(latency));
      element = array.next ? array.next[element]! : element + 1 === array.elementCount ? 0 : element + 1;
    }
    await slicer.pause();
  }
  return recorded;
}
