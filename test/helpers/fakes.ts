import pino from 'pino';
import type { MeasurementBackend, ProbeChannel } from '../../server/gpu/backend.js';
import type { GpuIdentity } from '../../server/model/gpu.js';
import type { Discover } from '../../server/jobs/scheduler.js';
import type { DiscoveryOutcome } from '../../server/model/document.js';

export const silentLogger = pino({ level: 'silent' });

export function gpuIdentity(overrides: Partial<GpuIdentity> = {}): GpuIdentity {
  return {
    uuid: 'GPU-11111111-2222-3333-4444-555555555555',
    index: 0,
    name: 'Test GPU',
    vendor: 'nvidia',
    pciBusId: '00000000:01:00.0',
    driverVersion: '580.00.01',
    ...overrides,
  };
}

/** A backend whose channels do nothing: scheduler tests drive discovery through a fake `discover`. */
export function inertBackend(probeVersion = 'test-probe-1', devices: GpuIdentity[] = [gpuIdentity()]): MeasurementBackend & { opened: string[]; closed: number } {
  const opened: string[] = [];
  const channel: ProbeChannel = {
    request: () => Promise.reject(new Error('inert backend: no measurements')),
    close: () => Promise.resolve(),
  };
  return {
    kind: 'sim',
    simulated: true,
    probeVersion,
    opened,
    closed: 0,
    listDevices: () => Promise.resolve(devices),
    open: (gpu) => {
      opened.push(gpu.uuid);
      return Promise.resolve(channel);
    },
    close() {
      this.closed++;
      return Promise.resolve();
    },
  };
}

export function outcome(l1SizeBytes = 1000): DiscoveryOutcome {
  return {
    elements: { l1: { size: { value: l1SizeBytes, unit: 'bytes', source: 'microbenchmark', confidence: 0.9 } } },
    device: { l2CacheSizeBytes: 4096 },
    raw: [{ name: 'l1.size.sweep', op: 'pchase.batch', args: { arrayBytesList: [1, 2] }, result: { series: [] } }],
    warnings: [],
  };
}

/** A discover whose calls the test resolves or rejects by hand. */
export function controlledDiscover(): Discover & { calls: Array<{ resolve: (o: DiscoveryOutcome) => void; reject: (e: unknown) => void; signal?: AbortSignal }> } {
  const calls: Array<{ resolve: (o: DiscoveryOutcome) => void; reject: (e: unknown) => void; signal?: AbortSignal }> = [];
  const fn = ((_channel, options) =>
    new Promise<DiscoveryOutcome>((resolve, reject) => {
      const call = { resolve, reject, ...(options.signal ? { signal: options.signal } : {}) };
      options.signal?.addEventListener('abort', () => reject(options.signal?.reason));
      calls.push(call);
    })) as Discover & { calls: typeof calls };
  fn.calls = calls;
  return fn;
}

export async function until(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
