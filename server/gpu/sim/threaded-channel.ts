import { Worker } from 'node:worker_threads';
import type { ProbeChannel, RequestOptions } from '../backend.js';
import { ProbeError } from '../../protocol/probe-error.js';
import type { ProbeOp, ProbeOps } from '../../protocol/ops.js';
import { workerEntry } from '../../paths.js';
import { SerialQueue } from '../serial-queue.js';
import type { SimulatedProbeRecipe } from './probe-recipe.js';
import { watchRequest } from './simulated-channel.js';

export type ThreadRequest =
  | { kind: 'request'; id: number; op: string; args: unknown }
  | { kind: 'cancel'; id: number; code: string; message: string };

/** An answer, with the probe's totals after it (so the channel's totals read synchronously). */
export type ThreadReply = { id: number; seconds: number; loads: number } & (
  | { ok: true; result: unknown }
  | { ok: false; code: string; message: string }
);

interface SimulatedTotals {
  seconds: number;
  loads: number;
}

/**
 * A ProbeChannel onto one simulated GPU that computes on a worker thread of
 * its own (./probe-thread.ts), as a real GPU computes beside the CPU: the
 * thread that runs discovery only sends requests and reads answers. Answers,
 * errors, timeouts and cancellation behave as SimulatedChannel's; the
 * simulated GPU is built from the same recipe, so the same seed measures the
 * same values.
 */
export class ThreadedSimulatedChannel implements ProbeChannel {
  private readonly queue = new SerialQueue();
  private readonly worker: Worker;
  private readonly pending = new Map<number, (reply: ThreadReply) => void>();
  private nextId = 1;
  private totals: SimulatedTotals = { seconds: 0, loads: 0 };
  private failure: Error | null = null;
  private closed = false;

  constructor(
    recipe: SimulatedProbeRecipe,
    private readonly onClose: () => void = () => undefined,
  ) {
    const entry = workerEntry(import.meta.url, 'probe-thread');
    this.worker = new Worker(new URL(entry.filename), { workerData: recipe, execArgv: entry.execArgv });
    // Only a request in flight keeps the process alive: a channel nobody closes does not hold it open.
    this.worker.unref();
    this.worker.on('message', (reply: ThreadReply) => {
      this.totals = { seconds: reply.seconds, loads: reply.loads };
      const settle = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      settle?.(reply);
    });
    const fail = (error: Error) => {
      this.failure ??= error;
      for (const [id, settle] of this.pending) settle({ id, ok: false, code: 'internal', message: error.message, ...this.totals });
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the simulated GPU's thread exited (code ${code})`)));
  }

  request<O extends ProbeOp>(op: O, args: ProbeOps[O]['args'], options: RequestOptions = {}): Promise<ProbeOps[O]['result']> {
    return this.queue.run(() => this.run(op, args, options) as Promise<ProbeOps[O]['result']>);
  }

  /** Simulated GPU time of the ops answered so far (SimulatedProbe.simulatedDeviceSeconds). */
  simulatedDeviceSeconds(): number {
    return this.totals.seconds;
  }

  /** Loads walked so far, warm-ups included. */
  loadCount(): number {
    return this.totals.loads;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.worker.terminate();
    this.onClose();
  }

  private async run(op: string, args: unknown, options: RequestOptions): Promise<unknown> {
    if (this.closed) throw new ProbeError('closed', 'the simulated probe channel is closed');
    if (this.failure) throw new ProbeError('internal', this.failure.message);
    const id = this.nextId++;
    const reply = new Promise<ThreadReply>((resolve) => this.pending.set(id, resolve));
    this.worker.ref();
    this.worker.postMessage({ kind: 'request', id, op, args } satisfies ThreadRequest);
    // Watched once the request is posted, so a cancel always follows the request it names.
    const stopWatching = watchRequest(op, options, (error) =>
      this.worker.postMessage({ kind: 'cancel', id, code: error.code, message: error.message } satisfies ThreadRequest),
    );
    try {
      const answer = await reply;
      if (!answer.ok) throw new ProbeError(answer.code, answer.message);
      return answer.result;
    } finally {
      stopWatching();
      if (this.pending.size === 0) this.worker.unref();
    }
  }
}
