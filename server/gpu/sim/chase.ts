import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { ProbeError } from '../../protocol/probe-error.js';
import type { ChasePattern, MemorySpace } from '../../protocol/ops.js';
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
 * The kernel that builds a chain writes each element (in address order), so
 * the chain sits dirty in the L2 until a flush. Only the last elements can
 * still be there: the last 1.25 L2's worth of lines is written, which gives
 * every set it touches more lines than ways, so the L2 ends as the whole
 * build would have left it. Shared-space chains live in the block. A launch
 * that flushes the L2 skips this (the flush empties it anyway).
 */
export async function writeChain(device: SimulatedDevice, space: MemorySpace, array: ChaseArray, slicer: WorkSlicer): Promise<void> {
  if (space === 'shared') return;
  const model = device.model;
  const bytesPerLine = Math.min(array.strideBytes, model.l2.segment.lineBytes);
  const tail = Math.min(array.elementCount, Math.ceil((1.25 * model.device.l2CacheSizeBytes) / bytesPerLine));
  let element = array.elementCount - tail;
  while (element < array.elementCount) {
    const blockEnd = Math.min(array.elementCount, element + LOADS_PER_BLOCK);
    for (; element < blockEnd; element += 1) device.writeThroughL2(array.baseAddress + element * array.strideBytes);
    await slicer.pause();
  }
}

export interface WalkPlan {
  loads: number;
  /** The element the walk starts at (default the head, 0). */
  from?: number;
  /** The first `record` loads' observed latencies are returned. */
  record?: number;
  /**
   * Set when the stop clock does not wait for the value (the self-test's
   * second walk): what it shows of every recorded load instead of its latency.
   */
  unconsumedCycles?: number;
  /** Threads walking the lap together (a warm-up): each load's latency is that much less wall time. */
  threads?: number;
}

/**
 * One chaser walking `plan.loads` elements from `plan.from` (a kernel starts
 * its chase at the array head each round), each load counted in the device's
 * totals. Returns the observed latencies of the recorded loads.
 */
export async function walk(
  device: SimulatedDevice,
  smId: number,
  space: MemorySpace,
  array: ChaseArray,
  plan: WalkPlan,
  slicer: WorkSlicer,
): Promise<number[]> {
  const recordCount = plan.record ?? 0;
  const unconsumed = plan.unconsumedCycles;
  const wallShare = 1 / (plan.threads ?? 1);
  const recorded: number[] = [];
  let element = plan.from ?? 0;
  let done = 0;
  while (done < plan.loads) {
    const blockEnd = Math.min(plan.loads, done + LOADS_PER_BLOCK);
    for (; done < blockEnd; done += 1) {
      const latency = device.load(smId, space, array.baseAddress + element * array.strideBytes, wallShare);
      if (done < recordCount) recorded.push(device.observe(unconsumed ?? latency));
      element = array.next ? array.next[element]! : element + 1 === array.elementCount ? 0 : element + 1;
    }
    await slicer.pause();
  }
  return recorded;
}

/** The element `steps` loads after `from` along the chain. */
export function elementAfter(array: ChaseArray, from: number, steps: number): number {
  if (!array.next) return (from + steps) % array.elementCount;
  let element = from;
  for (let i = 0; i < steps; i += 1) element = array.next[element]!;
  return element;
}
