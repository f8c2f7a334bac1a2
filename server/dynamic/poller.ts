/**
 * Re-reads dynamic state every pollMs and reports what changed. Reads never
 * overlap: the next one is scheduled when the previous one settles (a slow
 * NVML stretches the period instead of piling up reads). Listeners get the
 * new snapshot and the events; a listener that throws is logged, never
 * allowed to stop the loop.
 */
import { EventEmitter } from 'node:events';
import type { DynamicLogger } from './nvml-source.js';
import { diffSnapshots, type DynamicEvent } from './snapshot-diff.js';
import type { DynamicSnapshot, DynamicSource } from './types.js';

export const DEFAULT_POLL_MS = 1000;

export interface DynamicPollerOptions {
  source: DynamicSource;
  /** Period between the end of one read and the start of the next; default 1000 (the daemon passes config's TOPOD_POLL_MS). */
  pollMs?: number;
  /** While NVML is unavailable the period doubles per read up to this (default 60 s): no driver, no busy retry. */
  maxBackoffMs?: number;
  logger?: DynamicLogger;
}

export const DEFAULT_MAX_BACKOFF_MS = 60_000;

export interface PollerStats {
  reads: number;
  changes: number;
  lastReadAt: string | null;
  /** Duration of the last read (NVML calls + conversion), the cost of one refresh. */
  lastReadDurationMs: number | null;
}

export interface DynamicPollerEvents {
  change: [snapshot: DynamicSnapshot, events: DynamicEvent[]];
  snapshot: [snapshot: DynamicSnapshot];
}

export class DynamicPoller extends EventEmitter<DynamicPollerEvents> {
  readonly pollMs: number;
  readonly maxBackoffMs: number;
  private unavailableReads = 0;
  private readonly source: DynamicSource;
  private readonly logger: DynamicPollerOptions['logger'];
  private latest: DynamicSnapshot | null = null;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<DynamicEvent[]> | null = null;
  private running = false;
  private stopped = false;
  private readonly stats: PollerStats = { reads: 0, changes: 0, lastReadAt: null, lastReadDurationMs: null };

  constructor(options: DynamicPollerOptions) {
    super();
    this.source = options.source;
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    this.maxBackoffMs = Math.max(this.pollMs, options.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS);
    this.logger = options.logger;
    if (!(this.pollMs > 0)) throw new RangeError(`pollMs must be a positive number of milliseconds, got ${this.pollMs}`);
  }

  /** The last snapshot read (or given to start). */
  get current(): DynamicSnapshot | null {
    return this.latest;
  }

  get lastReadDurationMs(): number | null {
    return this.stats.lastReadDurationMs;
  }

  getStats(): PollerStats {
    return { ...this.stats };
  }

  /**
   * Starts polling. `initial` (a snapshot the caller already read at boot)
   * is the baseline; without it the first read reports every GPU as added.
   */
  start(initial?: DynamicSnapshot): void {
    if (this.running) return;
    this.stopped = false;
    if (initial) this.latest = initial;
    this.running = true;
    this.schedule(initial ? this.pollMs : 0);
  }

  /** Stops the loop; a read in flight finishes but reports nothing. */
  stop(): void {
    this.running = false;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Reads now (joining a read already in flight) and returns the events it produced; nothing after stop(). */
  poll(): Promise<DynamicEvent[]> {
    if (this.stopped) return Promise.resolve([]);
    this.inFlight ??= this.readAndDiff().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private schedule(delayMs: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.poll().finally(() => this.schedule(this.nextDelayMs()));
    }, delayMs);
    // Polling alone must not keep the process alive (shutdown waits on nothing).
    this.timer.unref();
  }

  /** The poll period, stretched exponentially while the source keeps answering unavailable. */
  nextDelayMs(): number {
    if (this.unavailableReads === 0) return this.pollMs;
    return Math.min(this.maxBackoffMs, this.pollMs * 2 ** Math.min(this.unavailableReads, 30));
  }

  private async readAndDiff(): Promise<DynamicEvent[]> {
    const started = performance.now();
    let snapshot: DynamicSnapshot;
    try {
      snapshot = await this.source.read();
    } catch (error) {
      // DynamicSource.read is meant never to throw; a broken one is logged and skipped.
      this.logger?.warn({ err: error }, 'dynamic state read failed');
      return [];
    }
    if (this.stopped) return [];
    this.stats.reads += 1;
    this.unavailableReads = snapshot.available ? 0 : this.unavailableReads + 1;
    this.stats.lastReadAt = snapshot.readAt;
    this.stats.lastReadDurationMs = performance.now() - started;
    const events = diffSnapshots(this.latest, snapshot);
    this.latest = snapshot;
    this.deliver('snapshot', snapshot);
    if (events.length > 0) {
      this.stats.changes += 1;
      this.logger?.info({ events }, 'dynamic state changed');
      this.deliver('change', snapshot, events);
    }
    return events;
  }

  private deliver<K extends keyof DynamicPollerEvents>(event: K, ...args: DynamicPollerEvents[K]): void {
    for (const listener of this.listeners(event)) {
      try {
        (listener as (...a: DynamicPollerEvents[K]) => void)(...args);
      } catch (error) {
        this.logger?.warn({ err: error, event }, 'a dynamic-state listener threw');
      }
    }
  }
}
