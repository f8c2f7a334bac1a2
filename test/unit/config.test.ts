import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, usage } from '../../server/config.js';

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
      pollMs: 1000,
    });
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
    [{ TOPOD_ADMIN_TOKEN: 'short' }, [], /at least 8 characters/],
    [{ TOPOD_SIM_MODEL: 'H100 SXM' }, [], /model names like/],
    [{}, ['--bogus', '1'], /unknown option "--bogus"/],
    [{}, ['--port'], /--port needs a value/],
  ] as const)('rejects %j %j with a message naming the setting', (env, argv, message) => {
    expect(() => loadConfig(env, argv)).toThrow(ConfigError);
    expect(() => loadConfig(env, argv)).toThrow(message);
  });

  it('lists every variable in the usage text', () => {
    for (const name of ['TOPOD_HOST', 'TOPOD_PORT', 'TOPOD_DB', 'TOPOD_BACKEND', 'TOPOD_SIM_MODEL', 'TOPOD_LOG_LEVEL', 'TOPOD_ADMIN_TOKEN', 'TOPOD_PROBE_CONCURRENCY', 'TOPOD_POLL_MS']) {
      expect(usage()).toContain(name);
    }
  });
});
