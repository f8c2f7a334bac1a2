import type { ProbeChannel } from '../gpu/backend.js';
import { ProbeError } from '../protocol/probe-error.js';
import type { ProbeOp, ProbeOps } from '../protocol/ops.js';
import type { RawSeries } from '../model/document.js';
import { stalledLoadsIn } from './stalled-loads.js';

export interface DiscoveryLogger {
  info(o: object, m?: string): void;
  warn(o: object, m?: string): void;
}

/** A strategy as the session sees it: a name and the series that are its. */
export interface SeriesFamily {
  name: string;
  ownsSeries(name: string): boolean;
}

/**
 * One discovery's conversation with a probe channel: every request is
 * recorded as a raw series (so a later analysis can re-read it) and carries
 * the discovery's abort signal.
 */
export class ProbeSession {
  readonly raw: RawSeries[] = [];
  /**
   * Set when a family's series showed another tenant in two measurements in
   * a row (issue 17 item 2): what was seen. The measurement is then not to
   * be stored as current unless an admin asked to measure a busy GPU.
   */
  interference: string | null = null;

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

  /**
   * Measures one family and looks at its series: timed loads stalled past
   * 25 µs mean another context took the GPU (no load takes that long on an
   * idle GPU; a time slice lasts milliseconds), and the cache state around
   * them is not what the benchmark set up. Such series are dropped and the
   * family measured again, once: a tenant that came and went costs one
   * family's time. Stalls in the second measurement too mean the tenant
   * stays: its series are kept (they show it), `interference` says so, and
   * later families are measured once (measuring twice would only double a
   * probe that is not stored). `warn` names what was seen either way.
   */
  async measureFamily(family: SeriesFamily, run: () => Promise<void>, warn: (warning: string, detail: object) => void): Promise<void> {
    const from = this.raw.length;
    await run();
    if (this.interference !== null) return;
    const first = stalledLoadsIn(this.raw.slice(from));
    if (first.stalled === 0) return;
    const seen = (found: typeof first) => `${found.stalled} of ${found.loads} timed loads took over ${found.limitCycles} cycles`;
    const dropped = new Set(this.raw.slice(from));
    this.discard((series) => dropped.has(series));
    const again = this.raw.length;
    await run();
    const second = stalledLoadsIn(this.raw.slice(again));
    if (second.stalled === 0) {
      warn(
        `${family.name}: measured again: in its first measurement ${seen(first)} (another tenant's time slice); the second showed none`,
        { strategy: family.name, stalled: first.stalled, loads: first.loads },
      );
      return;
    }
    this.interference = `${family.name}: ${seen(first)}, and ${second.stalled} of ${second.loads} when measured again: another tenant's time slices ran on the GPU`;
    warn(`interference seen in the measurements: ${this.interference}`, {
      strategy: family.name,
      stalled: [first.stalled, second.stalled],
    });
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
