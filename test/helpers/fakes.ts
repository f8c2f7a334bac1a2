import pino from 'pino';
import type { MeasurementBackend, ProbeChannel } from '../../server/gpu/backend.js';
import type { GpuIdentity } from '../../server/model/gpu.js';
import type { Discovery, Measurement } from '../../server/discovery/contract.js';
import type { Discover } from '../../server/jobs/scheduler.js';
import { createAnalysisExecutor } from '../../server/results/analysis-executor.js';
import { ResultLifecycle } from '../../server/results/lifecycle.js';
import type { Db } from '../../server/store/database.js';
import type { JobStore } from '../../server/store/jobs.js';
import type { NewResult, ResultStore } from '../../server/store/results.js';
import type { DiscoveryOutcome, ElementName, ElementTopology, RawSeries, ResultDocument } from '../../server/model/document.js';

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
/** A stored result's row for the store's own tests: gpuIdentity()'s GPU, an L1 of `l1` bytes, one raw series. */
export function resultRow(l1: number, overrides: Partial<NewResult> = {}): NewResult {
  return {
    gpuUuid: gpuIdentity().uuid,
    driverVersion: '580.1',
    probeVersion: 'p1',
    analysisVersion: 'a1',
    configuration: { backend: 'sim' },
    createdAt: new Date().toISOString(),
    durationMs: 5,
    simulated: true,
    jobId: null,
    document: { schemaVersion: 2, elements: { l1: { size: { value: l1 } } }, probe: {}, device: {} } as unknown as ResultDocument,
    raw: [{ name: 'l1.size.sweep', op: 'pchase.batch', args: {}, result: { sizeBytes: l1 } }],
    ...overrides,
  };
}

export function inertBackend(
  probeVersion = 'test-probe-1',
  devices: GpuIdentity[] = [gpuIdentity()],
): MeasurementBackend & { opened: string[]; closed: number } {
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

const sizeElement = (value: number): ElementTopology => ({ size: { value, unit: 'bytes', source: 'microbenchmark', confidence: 0.9 } });

/** A raw series the fake analysis reads an element's size from: "<element>.size.sweep" with `{ sizeBytes }`. */
export function sizeSeries(element: ElementName, sizeBytes: number): RawSeries {
  return { name: `${element}.size.sweep`, op: 'pchase.batch', args: { arrayBytesList: [1, 2] }, result: { sizeBytes } };
}

/** What a discovery measuring `sizes` returns: its elements as the fake analysis at scale 1 builds them from its series. */
export function outcome(l1SizeBytes = 1000, more: Partial<Record<ElementName, number>> = {}): DiscoveryOutcome {
  const sizes: Partial<Record<ElementName, number>> = { l1: l1SizeBytes, ...more };
  const raw = Object.entries(sizes).map(([element, bytes]) => sizeSeries(element as ElementName, bytes));
  return { ...fakeAnalysis().reanalyse(raw), raw };
}

/**
 * An analysis that reads each element's size from its "<element>.size.sweep"
 * series and multiplies it by `scale`: a "newer analysis" is another scale.
 * Series belong to the element their name starts with.
 */
export type FakeAnalysis = Pick<Discovery, 'version' | 'reanalyse' | 'carryOverRaw'> & { reanalysed: number };

export function fakeAnalysis(version = 'a1', scale = 1): FakeAnalysis {
  const analysis = {
    version,
    reanalysed: 0,
    reanalyse(raw: RawSeries[]): DiscoveryOutcome {
      analysis.reanalysed++;
      const elements: DiscoveryOutcome['elements'] = {};
      for (const series of raw) {
        const element = series.name.split('.')[0] as ElementName;
        const sizeBytes = (series.result as { sizeBytes?: number }).sizeBytes;
        if (typeof sizeBytes === 'number') elements[element] = sizeElement(sizeBytes * scale);
      }
      return { elements, device: { l2CacheSizeBytes: 4096 }, raw, warnings: [] };
    },
    carryOverRaw(previous: readonly RawSeries[], fresh: readonly RawSeries[], only: readonly ElementName[] | null): RawSeries[] {
      if (!only) return [...fresh];
      const remeasured = (series: RawSeries) => only.includes(series.name.split('.')[0] as ElementName);
      return [...fresh, ...previous.filter((series) => !remeasured(series))];
    },
  };
  return analysis;
}

/** A discover whose calls the test resolves or rejects by hand. */
export function controlledDiscover(): Discover & {
  calls: Array<{ resolve: (o: Measurement) => void; reject: (e: unknown) => void; signal?: AbortSignal }>;
} {
  const calls: Array<{ resolve: (o: Measurement) => void; reject: (e: unknown) => void; signal?: AbortSignal }> = [];
  const fn = ((_channel, options) =>
    new Promise<Measurement>((resolve, reject) => {
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

/** A stored document's elements as the analysis built them: the store adds when each element was measured (measuredAt). */
export function analysedElements(elements: Partial<Record<string, object>> | undefined): Record<string, object> {
  return Object.fromEntries(
    Object.entries(elements ?? {}).map(([name, element]) => {
      const { measuredAt: _measuredAt, ...rest } = element as { measuredAt?: string };
      return [name, rest];
    }),
  );
}

/** The result lifecycle over a test's stores, analysing in-process with a fake analysis. */
export function fakeLifecycle(
  stores: { db: Db; results: ResultStore; jobs: JobStore },
  analysis: FakeAnalysis = fakeAnalysis(),
): ResultLifecycle {
  return new ResultLifecycle({
    ...stores,
    analysis: createAnalysisExecutor(analysis),
    analysisVersion: analysis.version,
    logger: silentLogger,
  });
}
