/**
 * DynamicSource over the native NVML addon. Never throws: a missing addon,
 * a missing libnvidia-ml or a failing driver all read as
 * `available: false` with the reason, logged once per distinct reason.
 * The NVML session stays open between reads (one nvmlInit for the daemon's
 * life) and is closed by close().
 */
import type { Logger } from 'pino';
import { loadNvmlAddon } from './nvml-addon.js';
import { toDynamicSnapshot } from './nvml-map.js';
import type { NvmlAddon, NvmlNativeError } from './nvml-raw.js';
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
      const options = this.libraryPath ? { libraryPath: this.libraryPath } : {};
      if (!this.sessionOpen) {
        await addon.open(options);
        this.sessionOpen = true;
      }
      const raw = await addon.read(this.staticMaxAgeMs === undefined ? options : { ...options, staticMaxAgeMs: this.staticMaxAgeMs });
      const snapshot = toDynamicSnapshot(raw);
      this.stats = {
        durationMs: performance.now() - started,
        nativeMs: raw.readMicros / 1000,
        perDevice: raw.devices.map((d, i) => ({ uuid: snapshot.devices[i]?.uuid ?? '', index: d.index, ms: d.readMicros / 1000, staticRead: d.staticRead })),
        reinitCount: raw.reinitCount,
        libraryPath: raw.libraryPath,
      };
      this.noteRecovered();
      return snapshot;
    } catch (error) {
      return this.unavailable(describe(error));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.sessionOpen && this.addon) {
      this.sessionOpen = false;
      await this.addon.close();
    }
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
