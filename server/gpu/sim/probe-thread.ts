/**
 * A worker thread's entry: one simulated GPU, built from the recipe in
 * workerData, answering the requests its ThreadedSimulatedChannel posts. A
 * request's work yields every slice (WorkSlicer), so a cancel posted meanwhile
 * stops it at the next slice boundary.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ProbeError } from '../../protocol/probe-error.js';
import { WorkSlicer } from './chase.js';
import { buildSimulatedProbe, type SimulatedProbeRecipe } from './probe-recipe.js';
import type { ThreadReply, ThreadRequest } from './threaded-channel.js';

const port = parentPort;
if (!port) throw new Error('probe-thread.ts runs as a worker thread');
const probe = buildSimulatedProbe(workerData as SimulatedProbeRecipe);
const running = new Map<number, AbortController>();

port.on('message', (message: ThreadRequest) => {
  if (message.kind === 'cancel') {
    running.get(message.id)?.abort(new ProbeError(message.code, message.message));
    return;
  }
  const controller = new AbortController();
  running.set(message.id, controller);
  void answer(message.id, message.op, message.args, controller.signal).then((reply) => {
    running.delete(message.id);
    port.postMessage(reply);
  });
});

async function answer(id: number, op: string, args: unknown, signal: AbortSignal): Promise<ThreadReply> {
  const totals = () => ({ seconds: probe.simulatedDeviceSeconds(), loads: probe.loadCount() });
  try {
    const result = await probe.handle(op, args, new WorkSlicer(signal));
    return { id, ok: true, result, ...totals() };
  } catch (error) {
    const code = error instanceof ProbeError ? error.code : 'internal';
    return { id, ok: false, code, message: error instanceof Error ? error.message : String(error), ...totals() };
  }
}
