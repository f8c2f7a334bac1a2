import type { ProbeChannel, RequestOptions } from '../backend.js';
import { ProbeError } from '../../protocol/probe-error.js';
import type { ProbeOp, ProbeOps } from '../../protocol/ops.js';
import { SerialQueue } from '../serial-queue.js';
import { WorkSlicer } from './chase.js';
import type { SimulatedProbe } from './simulated-probe.js';

/**
 * A ProbeChannel onto one simulated GPU. Like the native probe it answers one
 * request at a time (later ones queue); timeouts and aborts stop the work at
 * the next slice boundary.
 */
export class SimulatedChannel implements ProbeChannel {
  private readonly queue = new SerialQueue();
  private closed = false;

  constructor(
    private readonly probe: SimulatedProbe,
    private readonly onClose: () => void = () => undefined,
  ) {}

  request<O extends ProbeOp>(op: O, args: ProbeOps[O]['args'], options: RequestOptions = {}): Promise<ProbeOps[O]['result']> {
    return this.queue.run(() => this.run(op, args, options) as Promise<ProbeOps[O]['result']>);
  }

  /** Simulated GPU time of the ops answered so far (SimulatedProbe.simulatedDeviceSeconds). */
  simulatedDeviceSeconds(): number {
    return this.probe.simulatedDeviceSeconds();
  }

  /** Loads walked so far, warm-ups included. */
  loadCount(): number {
    return this.probe.loadCount();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }

  private async run(op: string, args: unknown, options: RequestOptions): Promise<unknown> {
    if (this.closed) throw new ProbeError('closed', 'the simulated probe channel is closed');
    const controller = new AbortController();
    const stopWatching = watchRequest(op, options, (error) => controller.abort(error));
    try {
      return await this.probe.handle(op, args, new WorkSlicer(controller.signal));
    } finally {
      stopWatching();
    }
  }
}

/**
 * What ends a request to a simulated GPU early, on whichever thread it computes: `stop` is called with the
 * caller's abort reason (a ProbeError as given, anything else as 'cancelled') when its signal aborts, at once
 * if it already has, and with a 'timeout' error after `options.timeoutMs`. Returns what stops watching.
 */
export function watchRequest(op: string, options: RequestOptions, stop: (error: ProbeError) => void): () => void {
  const onAbort = () => {
    const reason: unknown = options.signal?.reason;
    stop(reason instanceof ProbeError ? reason : new ProbeError('cancelled', `${op} was cancelled`));
  };
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => stop(new ProbeError('timeout', `${op} did not finish within ${options.timeoutMs} ms`)), options.timeoutMs);
  return () => {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  };
}
