import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  checkExposure,
  ConfigError,
  loadConfig,
  probeEnvironment,
  SETTINGS,
  TEST_SETTINGS,
  unknownVariables,
  usage,
} from '../../server/config.js';

const CONFIGURATION_DOC = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

/** docs/configuration.md from its "# Configuration" heading up to the next heading. */
function configurationSection(): string {
  const start = CONFIGURATION_DOC.indexOf('# Configuration');
  const end = CONFIGURATION_DOC.indexOf('\n#', start + 1);
  expect(start).toBeGreaterThanOrEqual(0);
  return CONFIGURATION_DOC.slice(start, end < 0 ? undefined : end);
}

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({}, [])).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      dbPath: 'data/topod.sqlite',
      backend: 'auto',
      logLevel: 'info',
      adminToken: null,
      probeConcurrency: 1,
      workerNice: 10,
      pollMs: 1000,
      nvmlLib: null,
      nvmlAddon: null,
      probePath: null,
      probeDeadlineMs: 120_000,
    });
  });

  it('reads the poller, addon and probe settings like the others', () => {
    const env = {
      TOPOD_POLL_MS: '250',
      TOPOD_NVML_LIB: '/opt/fake/libnvidia-ml.so.1',
      TOPOD_NVML_ADDON: '/opt/topod_nvml.node',
      TOPOD_PROBE_DEADLINE_MS: '5000',
    };
    expect(loadConfig(env, [])).toMatchObject({
      pollMs: 250,
      nvmlLib: '/opt/fake/libnvidia-ml.so.1',
      nvmlAddon: '/opt/topod_nvml.node',
      probeDeadlineMs: 5000,
    });
    expect(loadConfig(env, ['--probe-deadline-ms', '60000', '--nvml-addon=/x.node', '--poll-ms', '50'])).toMatchObject({
      probeDeadlineMs: 60_000,
      nvmlAddon: '/x.node',
      pollMs: 50,
    });
  });

  it('gives the probe only what the GPU runtime needs from the environment', () => {
    const env = {
      PATH: '/usr/bin',
      LD_LIBRARY_PATH: '/usr/local/cuda/lib64',
      HOME: '/home/topod',
      CUDA_VISIBLE_DEVICES: 'GPU-1',
      CUDA_CACHE_PATH: '/var/cache/cuda',
      HIP_VISIBLE_DEVICES: '0',
      HSA_OVERRIDE_GFX_VERSION: '9.0.10',
      TOPOD_ADMIN_TOKEN: 'secret-token',
      TOPOD_PROBE_DEADLINE_MS: '5000',
      TOPOD_NVML_LIB: '/x.so',
      AWS_SECRET_ACCESS_KEY: 'nope',
      NODE_OPTIONS: '--inspect',
    };
    const expected = {
      PATH: '/usr/bin',
      LD_LIBRARY_PATH: '/usr/local/cuda/lib64',
      HOME: '/home/topod',
      CUDA_VISIBLE_DEVICES: 'GPU-1',
      CUDA_CACHE_PATH: '/var/cache/cuda',
      HIP_VISIBLE_DEVICES: '0',
      HSA_OVERRIDE_GFX_VERSION: '9.0.10',
    };
    expect(probeEnvironment(env)).toEqual(expected);
    expect(loadConfig(env, []).probeEnv).toEqual(expected);
  });

  it('reads environment variables, and flags win over them', () => {
    const env = { TOPOD_PORT: '9000', TOPOD_BACKEND: 'sim', TOPOD_SIM_MODEL: 'a100-40gb,h100-sxm5-80gb' };
    expect(loadConfig(env, [])).toMatchObject({ port: 9000, backend: 'sim', simModels: ['a100-40gb', 'h100-sxm5-80gb'] });
    expect(loadConfig(env, ['--port', '9100', '--backend=native'])).toMatchObject({ port: 9100, backend: 'native' });
  });

  it.each([
    [{ TOPOD_PORT: '80a' }, [], /TOPOD_PORT must be an integer from 0 to 65535, got "80a"/],
    [{ TOPOD_PORT: '70000' }, [], /TOPOD_PORT must be an integer/],
    [{ TOPOD_BACKEND: 'gpu' }, [], /TOPOD_BACKEND must be one of auto \| native \| sim, got "gpu"/],
    [{}, ['--log-level', 'loud'], /--log-level must be one of/],
    [{ TOPOD_PROBE_CONCURRENCY: '0' }, [], /TOPOD_PROBE_CONCURRENCY must be an integer from 1/],
    [{ TOPOD_WORKER_NICE: '20' }, [], /TOPOD_WORKER_NICE must be an integer from 0 to 19, got "20"/],
    [{}, ['--worker-nice', '-1'], /--worker-nice must be an integer from 0 to 19/],
    [{ TOPOD_PROBE_WHEN: 'sometimes' }, [], /TOPOD_PROBE_WHEN must be one of idle \| always, got "sometimes"/],
    [{ TOPOD_PROBE_MAX_WAIT_MS: '-5' }, [], /TOPOD_PROBE_MAX_WAIT_MS must be an integer from 1000/],
    [{ TOPOD_ADMIN_TOKEN: 'short' }, [], /at least 8 characters/],
    [{ TOPOD_SIM_MODEL: 'H100 SXM' }, [], /model names like/],
    [{ TOPOD_POLL_MS: '10' }, [], /TOPOD_POLL_MS must be an integer from 50 to 3600000, got "10"/],
    [{ TOPOD_POLL_MS: '1e3' }, [], /TOPOD_POLL_MS must be an integer/],
    [{ TOPOD_PROBE_DEADLINE_MS: '999' }, [], /TOPOD_PROBE_DEADLINE_MS must be an integer from 1000 to 3600000, got "999"/],
    [{ TOPOD_PROBE_DEADLINE_MS: '2h' }, [], /TOPOD_PROBE_DEADLINE_MS must be an integer/],
    [{}, ['--probe-deadline-ms', '-5'], /--probe-deadline-ms must be an integer/],
    [{}, ['--nvml-addon', ' '], /--nvml-addon must not be empty/],
    [{}, ['--nvml-lib', ''], /--nvml-lib must not be empty/],
    [{}, ['--bogus', '1'], /unknown option "--bogus"/],
    [{}, ['--port'], /--port needs a value/],
  ] as const)('rejects %j %j with a message naming the setting', (env, argv, message) => {
    expect(() => loadConfig(env, argv)).toThrow(ConfigError);
    expect(() => loadConfig(env, argv)).toThrow(message);
  });

  it('lists every variable in the usage text', () => {
    const names = [
      'TOPOD_HOST',
      'TOPOD_PORT',
      'TOPOD_DB',
      'TOPOD_BACKEND',
      'TOPOD_SIM_MODEL',
      'TOPOD_LOG_LEVEL',
      'TOPOD_ADMIN_TOKEN',
      'TOPOD_PROBE_CONCURRENCY',
      'TOPOD_WORKER_NICE',
      'TOPOD_PROBE_WHEN',
      'TOPOD_PROBE_MAX_WAIT_MS',
      'TOPOD_POLL_MS',
    ];
    names.push(
      'TOPOD_BODY_LIMIT_BYTES',
      'TOPOD_NVML_LIB',
      'TOPOD_NVML_ADDON',
      'TOPOD_PROBE_PATH',
      'TOPOD_PROBE_DEADLINE_MS',
      'TOPOD_PROBE_PROFILE',
      'TOPOD_CUPTI_PATH',
      'TOPOD_FAKE_NVML_SCENARIO',
    );
    names.push(
      'TOPOD_ADMIN_TOKEN_FILE',
      'TOPOD_INSECURE',
      'TOPOD_LOCK_DIR',
      'TOPOD_RETAIN_RESULTS',
      'TOPOD_RETAIN_JOBS_DAYS',
      'TOPOD_RATE_LIMIT_PER_MIN',
    );
    names.push('TOPOD_MAX_CONNECTIONS', 'TOPOD_MAX_EVENT_STREAMS', 'TOPOD_REQUEST_TIMEOUT_MS');
    names.push('TOPOD_NFD_FEATURES_DIR', 'TOPOD_CARVEOUT_PERCENT');
    for (const name of names) expect(usage()).toContain(name);
    expect(
      SETTINGS.map((s) => s.env)
        .concat(TEST_SETTINGS.map((t) => t.env))
        .sort(),
    ).toEqual([...names].sort());
  });

  it('the configuration table (docs/configuration.md) has a row for every variable, with its flag, and no other', () => {
    const section = configurationSection();
    const rows = section.split('\n').filter((line) => line.startsWith('| `TOPOD_'));
    for (const setting of SETTINGS) {
      expect(
        rows.find((row) => row.startsWith(`| \`${setting.env}\` | \`${setting.flag}\` |`)),
        setting.env,
      ).toBeDefined();
    }
    for (const test of TEST_SETTINGS)
      expect(
        rows.find((row) => row.startsWith(`| \`${test.env}\` |`)),
        test.env,
      ).toBeDefined();
    expect(rows).toHaveLength(SETTINGS.length + TEST_SETTINGS.length);
  });
});

describe('TOPOD_HOST', () => {
  it.each(['999.1.1.1', '1.2.3', '256.0.0.1', 'bad host', '-lead.example', '[::1]'])(
    '%s is "not an address", before any token check',
    (host) => {
      expect(() => loadConfig({ TOPOD_HOST: host })).toThrow(/TOPOD_HOST ".*" is not an address/);
    },
  );

  it.each(['127.0.0.1', '0.0.0.0', '::', '::1', 'localhost', 'gpu-node-7.cluster.local'])('%s is accepted', (host) => {
    const config = loadConfig({ TOPOD_HOST: host, TOPOD_INSECURE: '1' });
    expect(config.host).toBe(host);
    expect(() => checkExposure(config)).not.toThrow();
  });
});

describe('unknown TOPOD_* variables', () => {
  it("are reported once each with the closest setting; settings and other tools' variables are not", () => {
    const env = {
      TOPOD_MAX_CONECTIONS: '9',
      TOPOD_PORTT: '1',
      TOPOD_PORT: '1',
      TOPOD_URL: 'http://x',
      TOPOD_FAKE_NVML_SCENARIO: 'x',
      TOPOD_CUDA_ARCHITECTURES: '90',
      PATH: '/bin',
    };
    expect(unknownVariables(env)).toEqual([
      { name: 'TOPOD_MAX_CONECTIONS', closest: 'TOPOD_MAX_CONNECTIONS' },
      { name: 'TOPOD_PORTT', closest: 'TOPOD_PORT' },
    ]);
  });

  it('knows every variable of the settings table, so a new setting needs no second list', () => {
    const env = Object.fromEntries([...SETTINGS, ...TEST_SETTINGS].map((s) => [s.env, 'x']));
    expect(unknownVariables(env)).toEqual([]);
  });
});
