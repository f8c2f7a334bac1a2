import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { probeEnvironment } from '../config.js';
import { projectRoot } from '../paths.js';
import type { GpuIdentity } from '../model/gpu.js';
import type { MeasurementBackend, ProbeChannel } from './backend.js';
import { ProbeError } from '../protocol/probe-error.js';
import { JsonLinesChannel, type LoggerLike } from './native-channel.js';
import type { HelloResult } from '../protocol/ops.js';

export { JsonLinesChannel, parseResponse, type JsonLinesChannelOptions, type LoggerLike } from './native-channel.js';

/** Where scripts/build-probe.mjs puts the probe, from the package root (source or dist alike). */
export const DEFAULT_PROBE_PATH = path.join(projectRoot(), 'native/probe/build/topod-probe');
const HELLO_TIMEOUT_MS = 30_000;
/** The probe's own default budget per request (native/probe/src/main.cpp), when none is given. */
export const DEFAULT_PROBE_DEADLINE_MS = 120_000;
/**
 * How long past its deadline a probe may stay silent before the daemon kills
 * it: its watchdog exits 5 s past the deadline, and a probe that stopped
 * itself should be the one to say `timeout`.
 */
export const PROBE_ANSWER_GRACE_MS = 10_000;

export interface NativeBackendOptions {
  /** Default: native/probe/build/topod-probe (the daemon passes config's TOPOD_PROBE_PATH). */
  probePath?: string;
  logger?: LoggerLike;
  /** The probe's budget per request, passed as `--deadline-ms` (config's TOPOD_PROBE_DEADLINE_MS). */
  deadlineMs?: number;
  /** Per-request limit; past it the probe is killed and restarted. Default: deadlineMs + PROBE_ANSWER_GRACE_MS. */
  requestTimeoutMs?: number;
  /** The probe's whole environment (config's probeEnv); default: probeEnvironment() of this process. */
  env?: NodeJS.ProcessEnv;
}

/** What every probe process of one backend is started with. */
interface ProbeLaunch {
  probePath: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

function probeLaunch(options: NativeBackendOptions): ProbeLaunch {
  return {
    probePath: options.probePath ?? DEFAULT_PROBE_PATH,
    args: ['--deadline-ms', String(options.deadlineMs ?? DEFAULT_PROBE_DEADLINE_MS)],
    env: options.env ?? probeEnvironment(),
  };
}

/**
 * The native probe as a MeasurementBackend: one `topod-probe` process per
 * GPU, pinned by UUID through CUDA_VISIBLE_DEVICES (HIP_VISIBLE_DEVICES on
 * AMD), so a fault or hang on one GPU never touches another or the daemon.
 */
export class NativeBackend implements MeasurementBackend {
  readonly kind = 'native' as const;
  readonly simulated = false;
  readonly probeVersion: string;
  private readonly launch: ProbeLaunch;
  private readonly requestTimeoutMs: number;
  private readonly channels = new Set<JsonLinesChannel>();

  constructor(private readonly options: NativeBackendOptions = {}) {
    this.launch = probeLaunch(options);
    this.requestTimeoutMs = options.requestTimeoutMs ?? (options.deadlineMs ?? DEFAULT_PROBE_DEADLINE_MS) + PROBE_ANSWER_GRACE_MS;
    this.probeVersion = readProbeVersion(this.launch);
  }

  /** Whether the probe binary exists and its hello sees at least one GPU; `reason` says why not. */
  static async available(options: NativeBackendOptions = {}): Promise<{ ok: boolean; reason: string }> {
    const launch = probeLaunch(options);
    const { probePath } = launch;
    try {
      accessSync(probePath, constants.X_OK);
    } catch {
      return { ok: false, reason: `no probe binary at ${probePath} (build it with npm run build:probe on a machine with nvcc or hipcc)` };
    }
    try {
      const hello = await helloOnce(launch, options);
      if (hello.devices.length === 0)
        return {
          ok: false,
          reason: `${probePath} sees no GPU (${hello.vendor} runtime ${hello.runtimeVersion}, driver ${hello.driverVersion})`,
        };
      return { ok: true, reason: `${hello.devices.length} GPU(s) visible to ${probePath}` };
    } catch (error) {
      return { ok: false, reason: `${probePath} hello failed: ${(error as Error).message}` };
    }
  }

  async listDevices(): Promise<GpuIdentity[]> {
    const hello = await helloOnce(this.launch, this.options);
    return hello.devices.map((d) => ({
      uuid: d.uuid,
      index: d.index,
      name: d.name,
      vendor: hello.vendor,
      pciBusId: d.pciBusId,
      driverVersion: runtimeDriverVersion(hello),
    }));
  }

  async open(gpu: GpuIdentity): Promise<ProbeChannel> {
    const pin = gpu.vendor === 'amd' ? { HIP_VISIBLE_DEVICES: String(gpu.index) } : { CUDA_VISIBLE_DEVICES: gpu.uuid };
    const channel = new JsonLinesChannel({
      command: this.launch.probePath,
      args: this.launch.args,
      env: { ...this.launch.env, ...pin },
      label: `topod-probe ${gpu.uuid}`,
      onClose: () => this.channels.delete(channel),
      requestTimeoutMs: this.requestTimeoutMs,
      ...(this.options.logger ? { logger: this.options.logger } : {}),
    });
    try {
      const hello = await channel.request('hello', {}, { timeoutMs: HELLO_TIMEOUT_MS });
      const seen = hello.devices.map((d) => d.uuid);
      if (gpu.vendor !== 'amd' && (seen.length !== 1 || seen[0] !== gpu.uuid)) {
        throw new ProbeError('unsupported', `the probe pinned to ${gpu.uuid} sees [${seen.join(', ')}]`);
      }
    } catch (error) {
      await channel.close();
      throw error;
    }
    this.channels.add(channel);
    return channel;
  }

  /** The probe executable is still there and runnable (a package upgrade or a cleaned build folder removes it). */
  health(): { ok: boolean; detail: string } {
    const { probePath } = this.launch;
    try {
      accessSync(probePath, constants.X_OK);
      return { ok: true, detail: `native probe ${this.probeVersion} at ${probePath}` };
    } catch {
      return { ok: false, detail: `the probe executable ${probePath} is gone or not executable: no probe can run` };
    }
  }

  /** Kills every probe this backend started. */
  async close(): Promise<void> {
    await Promise.all([...this.channels].map((c) => c.close()));
    this.channels.clear();
  }
}

/** The runtime's driver API version as a cache-key string ("cuda-13000"); NVML replaces it with the release string. */
export function runtimeDriverVersion(hello: Pick<HelloResult, 'vendor' | 'driverVersion'>): string {
  return `${hello.vendor === 'amd' ? 'hip' : 'cuda'}-${hello.driverVersion}`;
}

async function helloOnce(launch: ProbeLaunch, options: NativeBackendOptions): Promise<HelloResult> {
  const channel = new JsonLinesChannel({
    command: launch.probePath,
    args: launch.args,
    env: launch.env,
    label: 'topod-probe (unpinned)',
    ...(options.logger ? { logger: options.logger } : {}),
  });
  try {
    return await channel.request('hello', {}, { timeoutMs: HELLO_TIMEOUT_MS });
  } finally {
    await channel.close();
  }
}

/** "0.1.0" from `topod-probe --version`; "unknown" when the binary cannot run. */
function readProbeVersion(launch: ProbeLaunch): string {
  const out = spawnSync(launch.probePath, ['--version'], { env: launch.env, encoding: 'utf8', timeout: 10_000 });
  const match = /^topod-probe (\S+)/.exec(out.stdout ?? '');
  return match?.[1] ?? 'unknown';
}
