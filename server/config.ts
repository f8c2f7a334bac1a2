/**
 * Configuration: environment variables with matching CLI flags
 * (`TOPOD_PORT=9000` ≡ `--port 9000`), validated once at boot. A bad value
 * stops the daemon with a message naming the variable, the flag and what is
 * accepted.
 *
 * This is the one module that reads the daemon's environment (main.ts hands
 * it process.env; test/unit/environment.test.ts checks nobody else reads
 * it). The poller, the NVML addon loader and the probe processes get their
 * settings from the Config built here, never from the environment.
 */
import { PROBE_WHEN, type ProbeWhen } from './model/job.js';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ERROR_CODES } from './errors.js';

export const BACKEND_CHOICES = ['auto', 'native', 'sim'] as const;
export type BackendChoice = (typeof BACKEND_CHOICES)[number];
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Everything the daemon takes from its environment, parsed and validated. */
export interface Config extends Settings {
  /**
   * The probe processes' whole environment: the few variables of the
   * daemon's that the GPU runtime needs (see probeEnvironment), nothing else.
   */
  probeEnv: Readonly<Record<string, string>>;
  /** What lstopo (GET /v1/node?format=hwloc-xml) is run with: the paths and the operator's own HWLOC_* choices. */
  hwlocEnv: Readonly<Record<string, string>>;
}

/** The settings of the table below: each one variable, one flag, one default. */
export interface Settings {
  host: string;
  port: number;
  dbPath: string;
  backend: BackendChoice;
  /** Comma-separated simulated models, one GPU each (sim backend). */
  simModels: string[];
  logLevel: LogLevel;
  adminToken: string | null;
  probeConcurrency: number;
  /** How much lower than the event loop's the worker threads' CPU priority is (nice increment, 0 … 19): serving comes first. */
  workerNice: number;
  /** idle: a probe of a GPU other processes use waits for it; always: measure anyway (the result says so). */
  probeWhen: ProbeWhen;
  /** A probe waiting for its busy GPU fails (TOPOD_ERR_GPU_BUSY) after this many ms. */
  probeMaxWaitMs: number;
  /** The L1/shared-memory split the per-SM benchmarks ask for (0: as much L1 as possible); another split is another cache key. */
  carveoutPercent: number;
  pollMs: number;
  bodyLimitBytes: number;
  /** Path of a libnvidia-ml to load instead of the system's (fake NVML in tests); passed to the addon explicitly. */
  nvmlLib: string | null;
  /** A built topod_nvml.node to try before the ones under native/nvml/build. */
  nvmlAddon: string | null;
  probePath: string | null;
  /** The probe's own budget per request (its --deadline-ms); the daemon kills a probe silent well past it. */
  probeDeadlineMs: number;
  /** Diagnostics: the file each probe appends its per-request host-time spans to (the probe reads TOPOD_PROBE_PROFILE itself). */
  probeProfile: string | null;
  /** libcupti.so (or its folder) the probe loads for the traffic family's counters (the probe reads TOPOD_CUPTI_PATH itself). */
  cuptiPath: string | null;
  /** A file holding the admin token (a mounted secret); read once at boot into adminToken. */
  adminTokenFile: string | null;
  /** Listen on a non-loopback address without an admin token anyway. */
  insecure: boolean;
  /** Folder of the per-GPU probe locks (gpu-<uuid>.lock); null: /run/topod as root, else $XDG_RUNTIME_DIR/topod or <tmp>/topod-<uid>. */
  lockDir: string | null;
  /** Results kept per GPU (with their raw series); older ones are pruned. */
  retainResults: number;
  /** Finished jobs older than this many days are deleted. */
  retainJobsDays: number;
  /** Mutating requests per client address per minute (429 beyond). */
  rateLimitPerMinute: number;
  /** Open TCP connections at most; at the cap the idlest makes room, and a new one is refused only when all are busy. */
  maxConnections: number;
  /** Open event streams (GET /v1/events) at most; 503 beyond. */
  maxEventStreams: number;
  /** A request's headers and body must arrive within this many ms (slow clients are cut off). */
  requestTimeoutMs: number;
  /** NFD local-source folder (features.d) to keep the node-label file `topod` in; null: no labels written. */
  nfdFeaturesDir: string | null;
}

export class ConfigError extends Error {
  readonly code = ERROR_CODES.CONFIG;
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

interface Option<K extends keyof Settings> {
  key: K;
  env: string;
  flag: string;
  help: string;
  parse: (raw: string, name: string) => Settings[K];
  fallback: Settings[K];
  /** A switch: the flag takes no value, the variable is 1/true/0/false. */
  boolean?: true;
}

const integerIn =
  (min: number, max: number) =>
  (raw: string, name: string): number => {
    const value = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    }
    return value;
  };

const oneOf =
  <T extends string>(choices: readonly T[]) =>
  (raw: string, name: string): T => {
    if (!(choices as readonly string[]).includes(raw)) {
      throw new ConfigError(`${name} must be one of ${choices.join(' | ')}, got "${raw}"`);
    }
    return raw as T;
  };

const nonEmpty = (raw: string, name: string): string => {
  if (raw.trim() === '') throw new ConfigError(`${name} must not be empty`);
  return raw;
};

/** An admin token: at least 8 characters, no whitespace inside (it travels in a header). */
function tokenValue(raw: string, name: string): string {
  if (raw === '')
    throw new ConfigError(`${name} is set but empty: give a token of at least 8 characters, or unset it to allow loopback clients only`);
  if (raw.length < 8) throw new ConfigError(`${name} must be at least 8 characters`);
  if (/\s/.test(raw)) throw new ConfigError(`${name} must not contain whitespace`);
  return raw;
}

const SIM_MODEL_PATTERN = /^[a-z0-9][a-z0-9-]*$/;
const HOST_NAME_PATTERN = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** An IP address or a host name; `999.1.1.1` is neither (before, it was refused as "no admin token" instead). */
function hostValue(raw: string, name: string): string {
  const host = raw.trim();
  if (host === '') throw new ConfigError(`${name} must not be empty`);
  if (isIP(host) !== 0) return host;
  const fix = 'give an IP address (127.0.0.1, 0.0.0.0, ::1, ::) or a host name';
  if (/^[\d.]+$/.test(host))
    throw new ConfigError(`${name} "${raw}" is not an address (an IPv4 address is four numbers from 0 to 255): ${fix}`);
  if (!HOST_NAME_PATTERN.test(host)) throw new ConfigError(`${name} "${raw}" is not an address: ${fix}`);
  return host;
}

const OPTIONS: { [K in keyof Settings]: Option<K> } = {
  host: { key: 'host', env: 'TOPOD_HOST', flag: '--host', help: 'address to listen on', parse: hostValue, fallback: '127.0.0.1' },
  port: {
    key: 'port',
    env: 'TOPOD_PORT',
    flag: '--port',
    help: 'TCP port (0 = any free port)',
    parse: integerIn(0, 65535),
    fallback: 8080,
  },
  dbPath: {
    key: 'dbPath',
    env: 'TOPOD_DB',
    flag: '--db',
    help: 'SQLite database file (":memory:" for none)',
    parse: nonEmpty,
    fallback: path.join('data', 'topod.sqlite'),
  },
  backend: {
    key: 'backend',
    env: 'TOPOD_BACKEND',
    flag: '--backend',
    help: 'measurement backend: auto (native probe when a GPU is present), native, sim',
    parse: oneOf(BACKEND_CHOICES),
    fallback: 'auto',
  },
  simModels: {
    key: 'simModels',
    env: 'TOPOD_SIM_MODEL',
    flag: '--sim-model',
    help: 'simulated GPU model(s), comma-separated, one GPU each',
    parse: (raw, name) => {
      const models = raw.split(',').map((m) => m.trim());
      for (const model of models) {
        if (!SIM_MODEL_PATTERN.test(model)) throw new ConfigError(`${name} must list model names like h100-sxm5-80gb, got "${raw}"`);
      }
      return models;
    },
    fallback: ['h100-sxm5-80gb'],
  },
  logLevel: {
    key: 'logLevel',
    env: 'TOPOD_LOG_LEVEL',
    flag: '--log-level',
    help: 'pino log level',
    parse: oneOf(LOG_LEVELS),
    fallback: 'info',
  },
  adminToken: {
    key: 'adminToken',
    env: 'TOPOD_ADMIN_TOKEN',
    flag: '--admin-token',
    help: 'bearer token for mutating endpoints (unset: loopback clients only)',
    parse: (raw, name) => tokenValue(raw, name),
    fallback: null,
  },
  adminTokenFile: {
    key: 'adminTokenFile',
    env: 'TOPOD_ADMIN_TOKEN_FILE',
    flag: '--admin-token-file',
    help: 'file holding the admin token (a mounted secret); one trailing newline is ignored',
    parse: nonEmpty,
    fallback: null,
  },
  insecure: {
    key: 'insecure',
    env: 'TOPOD_INSECURE',
    flag: '--insecure',
    help: 'allow listening on a non-loopback address without an admin token',
    parse: (raw, name) => {
      if (/^(1|true|yes)$/i.test(raw)) return true;
      if (/^(0|false|no)$/i.test(raw)) return false;
      throw new ConfigError(`${name} must be 1 or 0 (true or false), got "${raw}"`);
    },
    fallback: false,
    boolean: true,
  },
  lockDir: {
    key: 'lockDir',
    env: 'TOPOD_LOCK_DIR',
    flag: '--lock-dir',
    help: 'folder of the per-GPU probe locks gpu-<uuid>.lock (default /run/topod as root, else $XDG_RUNTIME_DIR/topod or <tmp>/topod-<uid>)',
    parse: nonEmpty,
    fallback: null,
  },
  retainResults: {
    key: 'retainResults',
    env: 'TOPOD_RETAIN_RESULTS',
    flag: '--retain-results',
    help: 'results kept per GPU with their raw series; older ones are pruned',
    parse: integerIn(1, 10_000),
    fallback: 10,
  },
  retainJobsDays: {
    key: 'retainJobsDays',
    env: 'TOPOD_RETAIN_JOBS_DAYS',
    flag: '--retain-jobs-days',
    help: 'finished jobs older than this many days are deleted',
    parse: integerIn(1, 36_500),
    fallback: 30,
  },
  rateLimitPerMinute: {
    key: 'rateLimitPerMinute',
    env: 'TOPOD_RATE_LIMIT_PER_MIN',
    flag: '--rate-limit-per-min',
    help: 'mutating requests per client address per minute (429 beyond)',
    parse: integerIn(1, 100_000),
    fallback: 60,
  },
  maxConnections: {
    key: 'maxConnections',
    env: 'TOPOD_MAX_CONNECTIONS',
    flag: '--max-connections',
    help: 'open HTTP connections at most; at the cap the one idle the longest is closed to make room (new ones are refused only while every one has a request in flight)',
    parse: integerIn(8, 1_000_000),
    fallback: 1024,
  },
  maxEventStreams: {
    key: 'maxEventStreams',
    env: 'TOPOD_MAX_EVENT_STREAMS',
    flag: '--max-event-streams',
    help: 'open GET /v1/events streams at most (503 beyond)',
    parse: integerIn(1, 100_000),
    fallback: 256,
  },
  requestTimeoutMs: {
    key: 'requestTimeoutMs',
    env: 'TOPOD_REQUEST_TIMEOUT_MS',
    flag: '--request-timeout-ms',
    help: "a request's headers and body must arrive within this many ms, checked every 0.5 s; slower clients are cut off (headers: at most 10 s; a connection sending no request is closed then)",
    parse: integerIn(1000, 3_600_000),
    fallback: 30_000,
  },
  nfdFeaturesDir: {
    key: 'nfdFeaturesDir',
    env: 'TOPOD_NFD_FEATURES_DIR',
    flag: '--nfd-features-dir',
    help: "NFD local-source folder (features.d) where topod keeps its node-label file 'topod' (unset: no labels written)",
    parse: nonEmpty,
    fallback: null,
  },
  probeConcurrency: {
    key: 'probeConcurrency',
    env: 'TOPOD_PROBE_CONCURRENCY',
    flag: '--probe-concurrency',
    help: 'GPUs probed in parallel',
    parse: integerIn(1, 64),
    fallback: 1,
  },
  workerNice: {
    key: 'workerNice',
    env: 'TOPOD_WORKER_NICE',
    flag: '--worker-nice',
    help: "the worker threads (probes, analyses, WAL checkpoints) run at this much lower CPU priority than the event loop (nice increment, 0 … 19; 0: the same), so a busy machine delays the probes' host side, never an answer; a probe process inherits it (its timings are the GPU's clocks)",
    parse: integerIn(0, 19),
    fallback: 10,
  },
  probeWhen: {
    key: 'probeWhen',
    env: 'TOPOD_PROBE_WHEN',
    flag: '--probe-when',
    help: 'idle: a probe of a GPU other processes use (compute or graphics processes, utilization) waits until it is idle, and one they start using mid-probe is measured again later; always: measure anyway, the result says it was measured on a busy GPU',
    parse: oneOf(PROBE_WHEN),
    fallback: 'idle',
  },
  probeMaxWaitMs: {
    key: 'probeMaxWaitMs',
    env: 'TOPOD_PROBE_MAX_WAIT_MS',
    flag: '--probe-max-wait-ms',
    help: 'a probe waiting for its busy GPU (looked at again after 5 s, then twice as late each time, at least once a minute) fails with TOPOD_ERR_GPU_BUSY after this many ms',
    parse: integerIn(1000, 30 * 86_400_000),
    fallback: 24 * 3_600_000,
  },
  carveoutPercent: {
    key: 'carveoutPercent',
    env: 'TOPOD_CARVEOUT_PERCENT',
    flag: '--carveout-percent',
    help: 'shared-memory carveout the per-SM cache benchmarks prefer, in % (0: most L1); the L1 size holds for it, and results of another value are another cache key',
    parse: integerIn(0, 100),
    fallback: 0,
  },
  pollMs: {
    key: 'pollMs',
    env: 'TOPOD_POLL_MS',
    flag: '--poll-ms',
    help: 'NVML poll interval in ms',
    parse: integerIn(50, 3_600_000),
    fallback: 1000,
  },
  bodyLimitBytes: {
    key: 'bodyLimitBytes',
    env: 'TOPOD_BODY_LIMIT_BYTES',
    flag: '--body-limit-bytes',
    help: 'largest accepted request body',
    parse: integerIn(64, 16 * 1024 * 1024),
    fallback: 16 * 1024,
  },
  nvmlLib: {
    key: 'nvmlLib',
    env: 'TOPOD_NVML_LIB',
    flag: '--nvml-lib',
    help: 'libnvidia-ml path override',
    parse: nonEmpty,
    fallback: null,
  },
  nvmlAddon: {
    key: 'nvmlAddon',
    env: 'TOPOD_NVML_ADDON',
    flag: '--nvml-addon',
    help: 'a built topod_nvml.node to load before native/nvml/build',
    parse: nonEmpty,
    fallback: null,
  },
  probePath: {
    key: 'probePath',
    env: 'TOPOD_PROBE_PATH',
    flag: '--probe-path',
    help: 'topod-probe executable',
    parse: nonEmpty,
    fallback: null,
  },
  probeDeadlineMs: {
    key: 'probeDeadlineMs',
    env: 'TOPOD_PROBE_DEADLINE_MS',
    flag: '--probe-deadline-ms',
    help: "budget of one probe request in ms (the probe's --deadline-ms); a probe silent 10 s past it is killed",
    parse: integerIn(1000, 3_600_000),
    // The probe's own default (native/probe/src/main.cpp).
    fallback: 120_000,
  },
  cuptiPath: {
    key: 'cuptiPath',
    env: 'TOPOD_CUPTI_PATH',
    flag: '--cupti-path',
    help: "libcupti.so, or its folder, for the traffic family's hardware counters (default: the CUDA toolkit's library folders); reaches the probe through its environment",
    parse: nonEmpty,
    fallback: null,
  },
  probeProfile: {
    key: 'probeProfile',
    env: 'TOPOD_PROBE_PROFILE',
    flag: '--probe-profile',
    help: 'diagnostics: a file every probe appends one line per request to, with the host time of its spans (chain set-up, kernel, L2 flush, answer encoding); reaches the probe through its environment',
    parse: nonEmpty,
    fallback: null,
  },
};

/**
 * Variables read by test doubles, not by topod: listed in --help and the
 * docs/configuration.md so every TOPOD_* variable is documented in one table.
 */
export const TEST_SETTINGS = [
  {
    env: 'TOPOD_FAKE_NVML_SCENARIO',
    help: 'test setting: the JSON scenario the fake libnvidia-ml (native/fake-nvml) serves; that library reads it itself',
  },
] as const;

/**
 * TOPOD_* variables read by something other than the daemon — the CLI, the
 * build scripts, CI and test tools — which the daemon must not warn about.
 */
export const OTHER_READERS_VARIABLES = [
  'TOPOD_URL',
  'TOPOD_REQUIRE_NATIVE',
  'TOPOD_REQUIRE_PROBE',
  'TOPOD_GPU_PLATFORM',
  'TOPOD_CUDA_ARCHITECTURES',
  'TOPOD_AMD_ARCHITECTURES',
  'TOPOD_NVML_INCLUDE',
  'TOPOD_CI_EXTRA_NODE',
  'TOPOD_FUZZ_SEED',
  'TOPOD_FUZZ_RUNS',
  'TOPOD_FUZZ_RUNS_PROBE',
  'TOPOD_REFERENCE',
  'TOPOD_ROOT',
] as const;

/** Edits (insert, delete, substitute) between two strings. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * TOPOD_* variables in `env` that nothing reads (a typo like
 * TOPOD_MAX_CONECTIONS would otherwise be ignored without a word), each with
 * the setting closest to it. The known names are the settings table's own,
 * so a setting added there is known here too.
 */
export function unknownVariables(env: NodeJS.ProcessEnv): Array<{ name: string; closest: string }> {
  const settings = [...Object.values(OPTIONS).map((o) => o.env), ...TEST_SETTINGS.map((t) => t.env)];
  const known = new Set<string>([...settings, ...OTHER_READERS_VARIABLES]);
  return Object.keys(env)
    .filter((name) => name.startsWith('TOPOD_') && !known.has(name))
    .sort()
    .map((name) => ({
      name,
      closest: settings.reduce((best, candidate) => (editDistance(name, candidate) < editDistance(name, best) ? candidate : best)),
    }));
}

/** The rows of `--help` and of the configuration table in docs/configuration.md. */
export const SETTINGS: ReadonlyArray<Pick<Option<keyof Settings>, 'env' | 'flag' | 'help' | 'fallback'>> = Object.values(OPTIONS);

/*
 * The probe processes get an explicit, minimal environment rather than the
 * daemon's whole one. The probe must not see TOPOD_ADMIN_TOKEN, and must not
 * read TOPOD_* settings on its own behind this module's back (its deadline
 * arrives as --deadline-ms, validated here). What it does keep is what the
 * GPU runtime needs: PATH and LD_LIBRARY_PATH (driver and runtime
 * libraries), HOME and TMPDIR (the CUDA JIT cache), and the runtimes' own
 * variables (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, CUDA_CACHE_PATH,
 * HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, HSA_*, …), so a restriction an
 * admin put on the daemon holds for its probes too. The backend then pins
 * each probe to its GPU on top of this.
 */
export const PROBE_ENV_NAMES = ['PATH', 'LD_LIBRARY_PATH', 'HOME', 'TMPDIR', 'TOPOD_PROBE_PROFILE', 'TOPOD_CUPTI_PATH'] as const;
export const PROBE_ENV_PREFIXES = ['CUDA_', 'HIP_', 'HSA_', 'ROCR_', 'ROCM_', 'AMD_'] as const;

/** The part of an environment the probe inherits (see above); the daemon's own by default. */
export function probeEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return keptEnvironment(env, PROBE_ENV_NAMES, PROBE_ENV_PREFIXES);
}

/** lstopo's environment: where to find it and its libraries, and hwloc's own variables (HWLOC_COMPONENTS, HWLOC_XMLFILE…). */
export function hwlocEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  return keptEnvironment(env, ['PATH', 'LD_LIBRARY_PATH', 'HOME', 'TMPDIR'], ['HWLOC_']);
}

function keptEnvironment(env: NodeJS.ProcessEnv, names: readonly string[], prefixes: readonly string[]): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (names.includes(name) || prefixes.some((prefix) => name.startsWith(prefix))) kept[name] = value;
  }
  return kept;
}

export function usage(): string {
  const lines = SETTINGS.map((o) => `  ${o.flag.padEnd(22)} ${o.env.padEnd(26)} ${o.help} (default: ${JSON.stringify(o.fallback)})`);
  const tests = TEST_SETTINGS.map((t) => `  ${''.padEnd(22)} ${t.env.padEnd(26)} ${t.help}`);
  const probe = `The probe processes inherit only ${PROBE_ENV_NAMES.join(', ')} and ${PROBE_ENV_PREFIXES.map((p) => `${p}*`).join(', ')} from this environment.`;
  return `Usage: topod [options]\n\nOptions (flag, environment variable):\n${lines.join('\n')}\n  --help                 print this text\n\nNot read by topod:\n${tests.join('\n')}\n\n${probe}`;
}

function flagValues(argv: readonly string[]): Map<string, string> {
  const known = new Map(Object.values(OPTIONS).map((o) => [o.flag, o] as const));
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const option = known.get(flag);
    if (!option) throw new ConfigError(`unknown option "${arg}"\n\n${usage()}`);
    const value = inline ?? (option.boolean ? 'true' : argv[++i]);
    if (value === undefined) throw new ConfigError(`${flag} needs a value`);
    values.set(flag, value);
  }
  return values;
}

/** Reads flags (which win) and environment variables; throws ConfigError on the first bad value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: readonly string[] = []): Config {
  const flags = flagValues(argv);
  const settings: Partial<Record<keyof Settings, unknown>> = {};
  for (const option of Object.values(OPTIONS) as Array<Option<keyof Settings>>) {
    const fromFlag = flags.get(option.flag);
    const raw = fromFlag ?? env[option.env];
    const name = fromFlag !== undefined ? option.flag : option.env;
    // An empty variable means unset, except the token: `TOPOD_ADMIN_TOKEN=` must not silently mean "no auth".
    const unset = raw === undefined || (fromFlag === undefined && raw === '' && option.key !== 'adminToken');
    settings[option.key] = unset ? option.fallback : option.parse(raw, name);
  }
  const parsed = settings as unknown as Settings;
  // --probe-profile reaches the probe the way the variable does: in its environment.
  const probeEnv = probeEnvironment(env);
  if (parsed.probeProfile !== null) probeEnv.TOPOD_PROBE_PROFILE = parsed.probeProfile;
  if (parsed.cuptiPath !== null) probeEnv.TOPOD_CUPTI_PATH = parsed.cuptiPath;
  const config = { ...parsed, probeEnv, hwlocEnv: hwlocEnvironment(env) };
  if (config.adminTokenFile !== null) {
    if (config.adminToken !== null) throw new ConfigError('TOPOD_ADMIN_TOKEN and TOPOD_ADMIN_TOKEN_FILE are both set: give one');
    config.adminToken = readTokenFile(config.adminTokenFile);
  }
  if (config.lockDir === null) config.lockDir = defaultLockDir(env);
  return config;
}

function readTokenFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`TOPOD_ADMIN_TOKEN_FILE ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  return tokenValue(text.replace(/\r?\n$/, ''), `the token in TOPOD_ADMIN_TOKEN_FILE ${file}`);
}

/** Where two topod instances of one host (and users' own benchmarks) meet to lock a GPU. */
export function defaultLockDir(env: NodeJS.ProcessEnv): string {
  if (process.getuid?.() === 0) return '/run/topod';
  if (env['XDG_RUNTIME_DIR']) return path.join(env['XDG_RUNTIME_DIR'], 'topod');
  return path.join(tmpdir(), `topod-${process.getuid?.() ?? 'user'}`);
}

/** Whether an address only this host can reach was given to listen on. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Checks that involve several settings. Listening where others can reach
 * without a token would let any client on the network start probes — unless
 * the operator says so with --insecure (main.ts warns at every start).
 */
export function checkExposure(config: Pick<Config, 'host' | 'adminToken' | 'insecure'>): void {
  if (config.adminToken === null && !isLoopbackHost(config.host) && !config.insecure) {
    throw new ConfigError(
      `TOPOD_HOST ${config.host} is reachable from other hosts but no admin token is set: set TOPOD_ADMIN_TOKEN or TOPOD_ADMIN_TOKEN_FILE, or pass --insecure (TOPOD_INSECURE=1) to serve reads to anyone who can reach it (mutating requests then stay loopback-only)`,
    );
  }
}
