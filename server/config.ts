/**
 * Configuration: environment variables with matching CLI flags
 * (`TOPOD_PORT=9000` ≡ `--port 9000`), validated once at boot. A bad value
 * stops the daemon with a message naming the variable, the flag and what is
 * accepted.
 */
import path from 'node:path';
import { ERROR_CODES } from './errors.js';

export const BACKEND_CHOICES = ['auto', 'native', 'sim'] as const;
export type BackendChoice = (typeof BACKEND_CHOICES)[number];
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  host: string;
  port: number;
  dbPath: string;
  backend: BackendChoice;
  /** Comma-separated simulated models, one GPU each (sim backend). */
  simModels: string[];
  logLevel: LogLevel;
  adminToken: string | null;
  probeConcurrency: number;
  pollMs: number;
  bodyLimitBytes: number;
  /** Path of a libnvidia-ml to load instead of the system's (fake NVML in tests). */
  nvmlLib: string | null;
  probePath: string | null;
}

export class ConfigError extends Error {
  readonly code = ERROR_CODES.CONFIG;
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

interface Option<K extends keyof Config> {
  key: K;
  env: string;
  flag: string;
  help: string;
  parse: (raw: string, name: string) => Config[K];
  fallback: Config[K];
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

const SIM_MODEL_PATTERN = /^[a-z0-9][a-z0-9-]*$/;

const OPTIONS: { [K in keyof Config]: Option<K> } = {
  host: { key: 'host', env: 'TOPOD_HOST', flag: '--host', help: 'address to listen on', parse: nonEmpty, fallback: '127.0.0.1' },
  port: { key: 'port', env: 'TOPOD_PORT', flag: '--port', help: 'TCP port (0 = any free port)', parse: integerIn(0, 65535), fallback: 8080 },
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
  logLevel: { key: 'logLevel', env: 'TOPOD_LOG_LEVEL', flag: '--log-level', help: 'pino log level', parse: oneOf(LOG_LEVELS), fallback: 'info' },
  adminToken: {
    key: 'adminToken',
    env: 'TOPOD_ADMIN_TOKEN',
    flag: '--admin-token',
    help: 'bearer token for mutating endpoints (unset: loopback clients only)',
    parse: (raw, name) => {
      if (raw.length < 8) throw new ConfigError(`${name} must be at least 8 characters`);
      return raw;
    },
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
  pollMs: { key: 'pollMs', env: 'TOPOD_POLL_MS', flag: '--poll-ms', help: 'NVML poll interval in ms', parse: integerIn(50, 3_600_000), fallback: 1000 },
  bodyLimitBytes: {
    key: 'bodyLimitBytes',
    env: 'TOPOD_BODY_LIMIT_BYTES',
    flag: '--body-limit-bytes',
    help: 'largest accepted request body',
    parse: integerIn(64, 16 * 1024 * 1024),
    fallback: 16 * 1024,
  },
  nvmlLib: { key: 'nvmlLib', env: 'TOPOD_NVML_LIB', flag: '--nvml-lib', help: 'libnvidia-ml path override', parse: nonEmpty, fallback: null },
  probePath: { key: 'probePath', env: 'TOPOD_PROBE_PATH', flag: '--probe-path', help: 'topod-probe executable', parse: nonEmpty, fallback: null },
};

export function usage(): string {
  const lines = Object.values(OPTIONS).map((o) => `  ${o.flag.padEnd(22)} ${o.env.padEnd(26)} ${o.help} (default: ${JSON.stringify(o.fallback)})`);
  return `Usage: topod [options]\n\nOptions (flag, environment variable):\n${lines.join('\n')}\n  --help                 print this text`;
}

function flagValues(argv: readonly string[]): Map<string, string> {
  const known = new Map(Object.values(OPTIONS).map((o) => [o.flag, o] as const));
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (!known.has(flag)) throw new ConfigError(`unknown option "${arg}"\n\n${usage()}`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new ConfigError(`${flag} needs a value`);
    values.set(flag, value);
  }
  return values;
}

/** Reads flags (which win) and environment variables; throws ConfigError on the first bad value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: readonly string[] = []): Config {
  const flags = flagValues(argv);
  const config: Partial<Record<keyof Config, unknown>> = {};
  for (const option of Object.values(OPTIONS) as Array<Option<keyof Config>>) {
    const fromFlag = flags.get(option.flag);
    const raw = fromFlag ?? env[option.env];
    const name = fromFlag !== undefined ? option.flag : option.env;
    config[option.key] = raw === undefined || (fromFlag === undefined && raw === '') ? option.fallback : option.parse(raw, name);
  }
  return config as unknown as Config;
}
