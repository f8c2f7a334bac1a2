/**
 * DynamicSource over the native NVML addon. Never throws: a missing addon,
 * a missing libnvidia-ml or a failing driver all read as
 * `available: false` with the reason, logged once per distinct reason.
 * The NVML session stays open between reads (one nvmlInit for the daemon's
 * life) and is closed by close(). readActivity() reads one GPU's tenants and
 * conditions the same way: no NVML reads as a reason, never as a throw.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { mergeReads, toGpuActivity, utilizationFromReads, utilizationFromSamples } from './activity-map.js';
import { DEFAULT_ACTIVITY_WINDOW_MS, type ActivityReadOptions, type GpuActivityReading } from './activity-types.js';
import { loadNvmlAddon } from './nvml-addon.js';
import { toDynamicSnapshot } from './nvml-map.js';
import type { NvmlAddon, NvmlNativeError, RawActivity } from './nvml-raw.js';
import { UNAVAILABLE_SNAPSHOT, type DynamicSnapshot, type DynamicSource } from './types.js';

export type DynamicLogger = Pick<Logger, 'info' | 'warn' | 'debug'>;

export interface NvmlSourceOptions {
  /** libnvidia-ml to load; null/undefined = TOPOD_NVML_LIB, else the system's libnvidia-ml.so.1. */
  libraryPath?: string | null;
  /** Injected addon (tests); default: the built native/nvml addon. */
  addon?: NvmlAddon | (() => NvmlAddon);
  logger?: DynamicLogger;
  /** Passed to the addon (NvmlReadOptions): 0 reads the static fields on every poll. */
  staticMaxAgeMs?: number;
}

/** Cost of the last successful read, for the poll benchmark and /health. */
export interface NvmlReadStats {
  /** Wall time of read() as JS sees it, addon queueing and conversion included. */
  durationMs: number;
  /** Time spent inside NVML calls. */
  nativeMs: number;
  /** staticRead: whether this read queried the device's static fields (else they came from the cache). */
  perDevice: Array<{ uuid: string; index: number; ms: number; staticRead: boolean }>;
  reinitCount: number;
  libraryPath: string;
}

/**
 * Reads spread over the window when the driver keeps no utilization samples:
 * each NVML figure already averages the driver's last sample period, so a
 * handful is enough to see a tenant that is not running every moment.
 */
export const POLLED_ACTIVITY_READS = 5;

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as Partial<NvmlNativeError>).code;
    return code ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

export class NvmlSource implements DynamicSource {
  private readonly libraryPath: string | undefined;
  private readonly staticMaxAgeMs: number | undefined;
  private readonly addonFactory: () => NvmlAddon;
  private readonly logger: DynamicLogger | undefined;
  private addon: NvmlAddon | null = null;
  private sessionOpen = false;
  private opening: Promise<void> | null = null;
  private closed = false;
  private lastReason: string | null = null;
  private stats: NvmlReadStats | null = null;

  constructor(options: NvmlSourceOptions = {}) {
    this.libraryPath = options.libraryPath ?? undefined;
    this.staticMaxAgeMs = options.staticMaxAgeMs;
    const addon = options.addon;
    this.addonFactory = typeof addon === 'function' ? addon : addon ? () => addon : () => loadNvmlAddon();
    this.logger = options.logger;
  }

  get lastRead(): NvmlReadStats | null {
    return this.stats;
  }

  async read(): Promise<DynamicSnapshot> {
    if (this.closed) return UNAVAILABLE_SNAPSHOT('NVML source closed');
    const started = performance.now();
    try {
      const addon = this.loadAddon();
      const options = this.libraryOptions();
      await this.openSession(addon);
      const raw = await addon.read(this.staticMaxAgeMs === undefined ? options : { ...options, staticMaxAgeMs: this.staticMaxAgeMs });
      const snapshot = toDynamicSnapshot(raw);
      this.stats = {
        durationMs: performance.now() - started,
        nativeMs: raw.readMicros / 1000,
        perDevice: raw.devices.map((d, i) => ({
          uuid: snapshot.devices[i]?.uuid ?? '',
          index: d.index,
          ms: d.readMicros / 1000,
          staticRead: d.staticRead,
        })),
        reinitCount: raw.reinitCount,
        libraryPath: raw.libraryPath,
      };
      this.noteRecovered();
      return snapshot;
    } catch (error) {
      return this.unavailable(describe(error));
    }
  }

  async readActivity(gpuUuid: string, options: ActivityReadOptions = {}): Promise<GpuActivityReading> {
    const windowMs = options.windowMs ?? DEFAULT_ACTIVITY_WINDOW_MS;
    if (!Number.isFinite(windowMs) || windowMs < 0) throw new RangeError(`windowMs must be a finite number >= 0, not ${windowMs}`);
    if (this.closed) return { activity: null, reason: 'NVML source closed' };
    try {
      const addon = this.loadAddon();
      const readActivity = addon.readActivity?.bind(addon);
      if (!readActivity) {
        return { activity: null, reason: 'the loaded NVML addon predates readActivity: rebuild it with `npm run build:native`' };
      }
      await this.openSession(addon);
      const read = (): Promise<RawActivity> => readActivity({ uuid: gpuUuid, ...this.libraryOptions() });
      const first = await read();
      const context = { gpuUuid, readAt: new Date() };
      const sampled = utilizationFromSamples(first, windowMs);
      if (sampled || windowMs === 0 || first.utilizationGpuPercent === null) {
        return { activity: toGpuActivity(first, { ...context, utilization: sampled ?? utilizationFromReads([first], 0) }), reason: null };
      }
      const reads = [first];
      const started = performance.now();
      for (let i = 1; i < POLLED_ACTIVITY_READS; i++) {
        await delay(windowMs / (POLLED_ACTIVITY_READS - 1));
        reads.push(await read());
      }
      const utilization = utilizationFromReads(reads, performance.now() - started);
      return { activity: mergeReads(reads, { ...context, readAt: new Date(), utilization }), reason: null };
    } catch (error) {
      return { activity: null, reason: describe(error) };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.sessionOpen && this.addon) {
      this.sessionOpen = false;
      await this.addon.close();
    }
  }

  private libraryOptions(): { libraryPath?: string } {
    return this.libraryPath ? { libraryPath: this.libraryPath } : {};
  }

  /** One nvmlInit for the source's life, however many reads start at once. */
  private async openSession(addon: NvmlAddon): Promise<void> {
    if (this.sessionOpen) return;
    this.opening ??= addon
      .open(this.libraryOptions())
      .then(() => {
        this.sessionOpen = true;
      })
      .finally(() => {
        this.opening = null;
      });
    await this.opening;
  }

  private loadAddon(): NvmlAddon {
    this.addon ??= this.addonFactory();
    return this.addon;
  }

  private unavailable(reason: string): DynamicSnapshot {
    if (reason !== this.lastReason) {
      this.logger?.warn({ reason }, 'NVML unavailable: live GPU/MIG state is not served');
      this.lastReason = reason;
    }
    return UNAVAILABLE_SNAPSHOT(reason);
  }

  private noteRecovered(): void {
    if (this.lastReason !== null) {
      this.logger?.info({ previousReason: this.lastReason }, 'NVML available again');
      this.lastReason = null;
    }
  }
}
