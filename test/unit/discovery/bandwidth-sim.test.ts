import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  BANDWIDTH_STRATEGY,
  bandwidthArrays,
  bandwidthPoints,
  buildBandwidth,
  copyReferenceBytesPerSecond,
} from '../../../server/discovery/strategies/bandwidth.js';
import { discover, reanalyse } from '../../../server/discovery/index.js';
import { ProbeSession } from '../../../server/discovery/probe-session.js';
import type { HelloResult } from '../../../server/protocol/ops.js';
import { GPU_MODELS, SimulatedBackend, type GpuModel } from '../../../server/gpu/sim/index.js';
import { modelledBytesPerSecond } from '../../../server/gpu/sim/bandwidth.js';
import { DOCUMENT_SCHEMA_VERSION, type RawSeries, type ResultDocument } from '../../../server/model/document.js';
import { mergeTopology } from '../../../server/topology/merge.js';
import { prepareDocument } from '../../../server/topology/prepare.js';
import { documentErrors } from '../../helpers/document-validator.js';
import { WHOLE_DISCOVERY_TIMEOUT_MS } from '../../helpers/simulated-discovery.js';
import { makeGpu } from '../../integration/api/fake-topology.js';

/**
 * The oracle is the sim's model: the L2 and device-memory peaks it is
 * configured with. The search stops when a step gains under 2 % and the sim's
 * launch times jitter by 2 %, so the best lies within 5 % of the peak.
 */
const TOLERANCE = 0.05;
const SERIES = ['bandwidth.l2.read', 'bandwidth.l2.write', 'bandwidth.dram.read', 'bandwidth.dram.write'];

async function open(model: GpuModel, seed: number) {
  const backend = new SimulatedBackend({ models: [model.id], seed, thread: true });
  const [gpu] = await backend.listDevices();
  return { backend, channel: await backend.open(gpu!) };
}

function expectNear(actual: number | undefined, truth: number): void {
  expect(actual).toBeDefined();
  expect(Math.abs(actual! - truth) / truth).toBeLessThan(TOLERANCE);
}

/**
 * The models of real GPUs: the H100 with an 8 MiB L2 (a stand-in for the daemon's tests) has an L2 array so
 * small that a launch's overhead, not the L2, sets its curve.
 */
const REAL_SIZED = Object.values(GPU_MODELS).filter((model) => model.id !== 'h100-l2-8mib');

describe.each(REAL_SIZED)('bandwidth discovery on the simulated $id', (model) => {
  it(
    `recovers the configured L2 and device-memory read and write peaks within ${TOLERANCE * 100} %, beside the L2 strategy's attributes`,
    async () => {
      const { channel } = await open(model, 21);
      const outcome = await discover(channel, { only: ['l2', 'deviceMemory'] });
      const { l2, deviceMemory } = outcome.elements;
      expectNear(l2?.readBandwidth?.value, model.l2.readBandwidthBytesPerS);
      expectNear(l2?.writeBandwidth?.value, model.l2.writeBandwidthBytesPerS);
      expectNear(deviceMemory?.readBandwidth?.value, model.deviceMemory.readBandwidthBytesPerS);
      expectNear(deviceMemory?.writeBandwidth?.value, model.deviceMemory.writeBandwidthBytesPerS);
      for (const value of [l2?.readBandwidth, l2?.writeBandwidth, deviceMemory?.readBandwidth, deviceMemory?.writeBandwidth]) {
        expect(value).toMatchObject({ unit: 'bytes/s', source: 'microbenchmark' });
        expect(value?.confidence).toBeGreaterThan(0.8);
        expect(value?.note).toMatch(/^best of \d+ launch geometries: \d+ SMs × \d+ blocks? × \d+ threads, \d+ pass(es)? per launch/);
      }
      expect(l2?.readBandwidth?.note).toContain('.cg loads');
      expect(l2?.writeBandwidth?.note).toContain('no read-for-fill');
      // The copy reference and the ratio, on device memory only.
      const copy = model.bandwidth.copyBytesPerS;
      expect(deviceMemory?.readBandwidth?.note).toMatch(
        /device-to-device copy reference \d+\.\d\d TB\/s \(bytes read \+ written\); this rate is \d+\.\d\d× the copy's/,
      );
      const ratio = Number(/this rate is (\d+\.\d\d)×/.exec(deviceMemory!.readBandwidth!.note!)![1]);
      expect(Math.abs(ratio - model.deviceMemory.readBandwidthBytesPerS / copy)).toBeLessThan(0.1);
      expect(l2?.readBandwidth?.note).not.toContain('copy');
      // Merged with the L2 strategy's element, not in place of it.
      expect(l2?.segmentSize).toBeDefined();
      expect(deviceMemory?.latency).toBeDefined();
      expect(outcome.warnings).toEqual([]);
      // The document with bandwidths stays valid, and re-analysis gives the same elements.
      expect(reanalyse(outcome.raw, ['l2', 'deviceMemory']).elements).toEqual(outcome.elements);
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );

  it('records every geometry (the curve): one pass launch-bound on the L2, threads and SMs saturating', async () => {
    const { channel } = await open(model, 22);
    const session = new ProbeSession(channel, undefined, undefined);
    const hello = (await channel.request('hello', {})) as HelloResult;
    const device = hello.devices[0]!;
    await BANDWIDTH_STRATEGY.measure(session, device);
    const l2Read = bandwidthPoints(session.raw, 'bandwidth.l2.read');
    expect(l2Read.length).toBeGreaterThan(8);
    expect(new Set(l2Read.map((p) => p.cacheHint))).toEqual(new Set(['cg']));
    expect(l2Read.every((p) => p.arrayBytes === bandwidthArrays(device).l2Bytes)).toBe(true);
    // Every point of the curve is what the model gives that geometry, launch overhead and jitter aside.
    for (const point of l2Read) {
      const bytes = point.arrayBytes * point.passes;
      const truth = bytes / (model.launchOverheadS + bytes / modelledBytesPerSecond(model, { mode: 'read', ...point }));
      expect(Math.abs(point.bytesPerSecond - truth) / truth).toBeLessThan(0.1);
    }
    const onePass = l2Read.find((p) => p.passes === 1)!;
    expect(onePass.bytesPerSecond).toBeLessThan(0.6 * model.l2.readBandwidthBytesPerS);
    const fewestSms = l2Read.reduce((a, b) => (b.blocks < a.blocks ? b : a));
    expect(fewestSms.blocks).toBeLessThan(model.device.multiprocessorCount / 4);
    expect(fewestSms.bytesPerSecond).toBeLessThan(0.6 * model.l2.readBandwidthBytesPerS);
    for (const name of SERIES) expect(bandwidthPoints(session.raw, name).length, name).toBeGreaterThan(2);
    expectNear(copyReferenceBytesPerSecond(session.raw) ?? undefined, model.bandwidth.copyBytesPerS);
  });

  it('costs well under a second of simulated GPU time', async () => {
    const { backend, channel } = await open(model, 23);
    const hello = (await channel.request('hello', {})) as HelloResult;
    const before = backend.simulatedDeviceSeconds();
    await BANDWIDTH_STRATEGY.measure(new ProbeSession(channel, undefined, undefined), hello.devices[0]!);
    expect(backend.simulatedDeviceSeconds() - before).toBeLessThan(0.5);
  });
});

describe('buildBandwidth', () => {
  const device = { ...GPU_MODELS['h100-sxm5-80gb']!.device, index: 0, uuid: 'GPU-0', name: 'sim', pciBusId: null };
  const run = (name: string, passes: number, seconds: number[]): RawSeries => ({
    name,
    op: 'bandwidth',
    args: { mode: 'read', arrayBytes: 16 * 1024 * 1024, blocks: 132, threadsPerBlock: 1024, repetitions: seconds.length, passes },
    result: { bytesPerRepetition: 16 * 1024 * 1024 * passes, secondsPerRepetition: seconds },
  });

  it('builds nothing from no series, and warns about device memory without its copy reference', () => {
    expect(buildBandwidth([], device)).toEqual({ elements: {}, warnings: [] });
    const built = buildBandwidth([run('bandwidth.dram.read', 1, [1e-3, 1e-3, 1e-3])], device);
    expect(built.elements.deviceMemory?.readBandwidth?.value).toBe(Math.round((16 * 1024 * 1024) / 1e-3));
    expect(built.elements.deviceMemory?.readBandwidth?.note).not.toContain('copy');
    expect(built.warnings).toEqual(['bandwidth: no device-to-device copy recorded: device-memory bandwidth without its reference']);
  });

  it('takes the fastest geometry of a series and names it', () => {
    const built = buildBandwidth(
      [run('bandwidth.l2.read', 1, [2e-5, 2e-5, 2e-5]), run('bandwidth.l2.read', 8, [1.58e-4, 1.58e-4, 1.738e-4])],
      device,
    );
    expect(built.elements.l2?.readBandwidth?.value).toBe(Math.round((8 * 16 * 1024 * 1024) / 1.58e-4));
    // Converged (no launch overhead to speak of): its repetitions' spread of 10 % sets it.
    expect(built.elements.l2?.readBandwidth?.confidence).toBeCloseTo(0.9, 3);
    expect(built.elements.l2?.readBandwidth?.note).toContain(
      'best of 2 launch geometries: 132 SMs × 1 block × 1024 threads, 8 passes per launch, 16 B loads over a 16 MiB array (32 % of the API L2)',
    );
    expect(built.elements.l2?.readBandwidth?.note).toMatch(
      /launch overhead 0\.\d % of its launch time, 1\.3 % ahead of the next geometries/,
    );
    expect(built.elements.deviceMemory).toBeUndefined();
  });

  it('gives a best that is still bound by its launch overhead a low confidence, however steady its launches', () => {
    // 8 passes in twice the time of one: most of a launch is its overhead.
    const built = buildBandwidth(
      [run('bandwidth.l2.read', 1, [2e-5, 2e-5, 2e-5]), run('bandwidth.l2.read', 8, [4e-5, 4e-5, 4e-5])],
      device,
    );
    expect(built.elements.l2?.readBandwidth?.confidence).toBeLessThan(0.5);
    expect(built.elements.l2?.readBandwidth?.note).toContain('launch overhead 42.9 % of its launch time');
  });
});

describe('a result with bandwidths', () => {
  it(
    'is a document the schema accepts, as served',
    async () => {
      const { channel } = await open(GPU_MODELS['a100-40gb']!, 24);
      const outcome = await discover(channel, { only: ['deviceMemory'] });
      expect(Object.keys(outcome.elements)).toEqual(['deviceMemory']);
      expect(outcome.elements.deviceMemory?.readBandwidth).toBeDefined();
      // The recorded H100 result with this device-memory element in place of its own.
      const recorded = (JSON.parse(readFileSync('test/fixtures/h100/discovery-run.json', 'utf8')) as { document: ResultDocument }).document;
      const result: ResultDocument = {
        ...recorded,
        schemaVersion: DOCUMENT_SCHEMA_VERSION,
        carveout: null,
        elements: { ...recorded.elements, deviceMemory: outcome.elements.deviceMemory },
      };
      const gpu = mergeTopology(
        result,
        { summary: makeGpu({ uuid: result.gpu.uuid }), jobUrl: null },
        { available: false, reason: 'no NVML here', driverVersion: null, device: null },
      );
      expect(documentErrors('GpuTopologyDocument', JSON.parse(prepareDocument(gpu).body))).toEqual([]);
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );
});
