import { ProbeError, type ProbeChannel } from '../gpu/backend.js';
import type { ProbeOp, ProbeOps } from '../gpu/protocol.js';
import type { RawSeries } from '../model/document.js';

export interface DiscoveryLogger {
  info(o: object, m?: string): void;
  warn(o: object, m?: string): void;
}

/**
 * One discovery's conversation with a probe channel: every request is
 * recorded as a raw series (so a later analysis can re-read it) and carries
 * the discovery's abort signal.
 */
export class ProbeSession {
  readonly raw: RawSeries[] = [];

  constructor(
    private readonly channel: ProbeChannel,
    private readonly signal: AbortSignal | undefined,
    readonly logger: DiscoveryLogger | undefined,
  ) {}

  async request<O extends ProbeOp>(name: string, op: O, args: ProbeOps[O]['args']): Promise<ProbeOps[O]['result']> {
    this.throwIfAborted();
    const result = await this.channel.request(op, args, this.signal ? { signal: this.signal } : {});
    this.raw.push({ name, op, args, result });
    return result;
  }

  /** Forgets recorded series (a benchmark the probe refused part-way). */
  discard(predicate: (series: RawSeries) => boolean): void {
    const kept = this.raw.filter((series) => !predicate(series));
    this.raw.splice(0, this.raw.length, ...kept);
  }

  throwIfAborted(): void {
    if (!this.signal?.aborted) return;
    const reason: unknown = this.signal.reason;
    throw reason instanceof ProbeError ? reason : new ProbeError('cancelled', 'discovery was cancelled');
  }
}
