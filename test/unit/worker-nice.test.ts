/**
 * TOPOD_WORKER_NICE lowers the worker threads through Piscina, which loads the optional @napi-rs/nice addon and
 * says nothing when it cannot: the daemon asks first, and warns (server/daemon.ts).
 */
import { describe, expect, it } from 'vitest';
import { workerNiceIncrement, workerNiceUnavailable } from '../../server/paths.js';

describe.skipIf(process.platform !== 'linux')('worker threads below the event loop, on Linux', () => {
  it('can lower them here: the addon loads', () => {
    expect(workerNiceUnavailable()).toBeNull();
  });

  it('says why when the addon does not load', () => {
    const missing = (id: string) => {
      throw new Error(`Cannot find module '${id}'`);
    };
    expect(workerNiceUnavailable(missing)).toBe("@napi-rs/nice does not load: Cannot find module '@napi-rs/nice'");
  });

  it('passes the configured increment to Piscina, and 0 when none is configured', () => {
    expect(workerNiceIncrement(10)).toBe(10);
    expect(workerNiceIncrement(undefined)).toBe(0);
  });
});
