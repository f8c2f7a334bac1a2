import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { reanalyse } from '../../../server/discovery/index.js';
import { L2_STRUCTURE_STRATEGY } from '../../../server/discovery/strategies/l2-structure.js';
import { ProbeSession } from '../../../server/discovery/probe-session.js';
import { ProbeError } from '../../../server/protocol/probe-error.js';
import type { HelloResult, L2FarnearArgs, L2PartitionResult } from '../../../server/protocol/ops.js';
import { FARNEAR_BEYOND, FARNEAR_DRAM, FARNEAR_SHARED } from '../../../server/discovery/strategies/l2-farnear.js';
import { GPU_MODELS, type GpuModel } from '../../../server/gpu/sim/index.js';
import { DOCUMENT_SCHEMA_VERSION, type RawSeries, type ResultDocument } from '../../../server/model/document.js';
import { mergeTopology } from '../../../server/topology/merge.js';
import { prepareDocument } from '../../../server/topology/prepare.js';
import { documentErrors } from '../../helpers/document-validator.js';
import { makeGpu } from '../../integration/api/fake-topology.js';
import { openSimulated } from '../../helpers/sim-channel.js';

const H100 = GPU_MODELS['h100-sxm5-80gb']!;
const A100 = GPU_MODELS['a100-40gb']!;

/** On a thread of its own: the L2 walks are long, and this file's thread runs under coverage. */
const open = (model: GpuModel, seed: number) => openSimulated(model, seed, { thread: true });

/** The model's SMs per L2 segment (segmentOfGpc over gpcOfSm), as the analysis lists groups: ascending, by lowest SM. */
function truthGroups(model: GpuModel): number[][] {
  const groups: number[][] = [];
  for (const [sm, gpc] of model.compute.gpcOfSm.entries()) {
    const segment = model.l2.segmentOfGpc[gpc]!;
    groups[segment] ??= [];
    groups[segment].push(sm);
  }
  return groups.filter(Boolean).sort((a, b) => a[0]! - b[0]!);
}

/** The L2-structure strategy alone on a simulated GPU (after hello and calibrate, as discovery runs it), checked to cost little GPU time. */
async function measureStructure(model: GpuModel, seed: number): Promise<ProbeSession> {
  const channel = await open(model, seed);
  const session = new ProbeSession(channel, undefined, undefined);
  const hello = (await session.request('hello', 'hello', {})) as HelloResult;
  await session.request('calibrate', 'calibrate', { samples: 1024 });
  const before = channel.simulatedDeviceSeconds();
  await L2_STRUCTURE_STRATEGY.measure(session, hello.devices[0]!);
  expect(channel.simulatedDeviceSeconds() - before).toBeLessThan(0.5);
  return session;
}

describe.each([
  [H100, 1],
  [A100, 2],
])('l2.partition on the simulated $id', (model, seed) => {
  it('the model wires SMs to segments spread over the id range, not by halves', () => {
    const [first, second] = truthGroups(model);
    expect(first!.length + second!.length).toBe(model.device.multiprocessorCount);
    const half = model.device.multiprocessorCount / 2;
    expect(first!.some((sm) => sm >= half)).toBe(true);
    expect(second!.some((sm) => sm < half)).toBe(true);
  });

  it('recovers the SM → partition map exactly, and the near and far hit latencies, in little GPU time', async () => {
    const session = await measureStructure(model, seed);
    const raw = session.raw.filter((s) => s.op === 'l2.partition');
    expect(raw.length).toBeGreaterThan(0);
    for (const series of raw) expect((series.result as L2PartitionResult).sms).toHaveLength(model.device.multiprocessorCount);

    const outcome = reanalyse(session.raw);
    const partitions = outcome.elements.l2?.partitions;
    expect(partitions).toBeDefined();
    expect(partitions!.count).toBe(model.l2.segmentCount);
    expect(partitions!.smGroups).toEqual(truthGroups(model));
    expect(Math.round(partitions!.nearLatency.p50)).toBe(model.l2.nearHitLatencyCycles);
    expect(Math.round(partitions!.farLatency!.p50)).toBe(model.l2.farHitLatencyCycles);
    expect(partitions!.confidence).toBeGreaterThan(0.8);
    expect(partitions!.source).toBe('microbenchmark');
  });
});

describe.each([
  [H100, 4],
  [A100, 5],
])('l2.farnear and l2.persist on the simulated $id', (model, seed) => {
  it('recover far-partition hits past capacity, near and far device memory, the shared-data capacity and the persisting window, in little GPU time', async () => {
    const session = await measureStructure(model, seed);
    const farnear = session.raw.filter((s) => s.op === 'l2.farnear');
    expect(farnear.map((s) => s.name)).toEqual([FARNEAR_BEYOND, FARNEAR_DRAM, FARNEAR_SHARED, FARNEAR_SHARED]);
    // One SM of each group: the lowest ids.
    const groups = truthGroups(model);
    for (const s of farnear) expect((s.args as L2FarnearArgs).smIds).toEqual([groups[0]![0], groups[1]![0]]);

    const outcome = reanalyse(session.raw);
    const p = outcome.elements.l2!.partitions!;
    const memory = model.deviceMemory;
    expect(Math.round(p.farBeyondCapacityLatency!.p50)).toBe(model.l2.farPartitionHitLatencyCycles);
    expect(Math.abs(p.deviceMemoryNearLatency!.p50 - (memory.nearLatencyCycles ?? memory.latencyCycles))).toBeLessThanOrEqual(1);
    expect(Math.abs(p.deviceMemoryFarLatency!.p50 - memory.latencyCycles)).toBeLessThanOrEqual(1);
    // Data both groups read is held in both partitions: one segment's worth, bracketed by 0.75 and 1.25 segments.
    expect(p.sharedDataCapacityBytes).toBeGreaterThan(0.75 * model.l2.segment.sizeBytes);
    expect(p.sharedDataCapacityBytes).toBeLessThan(1.25 * model.l2.segment.sizeBytes);
    expect(p.persistingWindow!.hitRateWithout).toBe(0);
    expect(p.persistingWindow!.hitRateWith).toBe(1);
    expect(p.persistingWindow!.windowBytes).toBeLessThanOrEqual(model.device.persistingL2CacheMaxBytes!);
  }, 60_000);

  it('leave the fields out, with a warning, where the probe lacks the ops (the partitions stay)', async () => {
    const channel = await open(model, seed);
    const refusing = {
      ...channel,
      request: (op: string, args: unknown, options: object) =>
        op === 'l2.farnear' || op === 'l2.persist'
          ? Promise.reject(new ProbeError('unknown_op', `unknown op ${op}`))
          : channel.request(op as never, args as never, options),
    } as typeof channel;
    const session = new ProbeSession(refusing, undefined, undefined);
    const hello = (await session.request('hello', 'hello', {})) as HelloResult;
    await L2_STRUCTURE_STRATEGY.measure(session, hello.devices[0]!);
    const built = L2_STRUCTURE_STRATEGY.build(session.raw, hello.devices[0]!, null);
    const p = built.elements.l2!.partitions!;
    expect(p.smGroups).toEqual(truthGroups(model));
    expect(p.farBeyondCapacityLatency).toBeUndefined();
    expect(p.persistingWindow).toBeUndefined();
    expect(built.warnings.some((w) => w.includes('l2.farnear did not run'))).toBe(true);
  }, 60_000);
});

describe('the partitions beside the L2 strategy', () => {
  it('merge into the recorded H100 l2 element (size and latency kept) in a document the schema accepts', async () => {
    const recorded = JSON.parse(readFileSync('test/fixtures/h100/discovery-run.json', 'utf8')) as {
      raw: RawSeries[];
      document: ResultDocument;
    };
    const channel = await open(H100, 3);
    const session = new ProbeSession(channel, undefined, undefined);
    const hello = (await session.request('hello', 'hello', {})) as HelloResult;
    await L2_STRUCTURE_STRATEGY.measure(session, hello.devices[0]!);
    const outcome = reanalyse([...recorded.raw, ...session.raw]);
    const l2 = outcome.elements.l2!;
    expect(l2.partitions?.count).toBe(2);
    expect(l2.segmentSize).toEqual(reanalyse(recorded.raw).elements.l2!.segmentSize);
    expect(l2.latency).toBeDefined();
    const result: ResultDocument = {
      ...recorded.document,
      schemaVersion: DOCUMENT_SCHEMA_VERSION,
      carveout: null,
      elements: { ...recorded.document.elements, l2 },
    };
    const gpu = mergeTopology(
      result,
      { summary: makeGpu({ uuid: result.gpu.uuid }), jobUrl: null },
      { available: false, reason: 'no NVML here', driverVersion: null, device: null },
    );
    expect(documentErrors('GpuTopologyDocument', JSON.parse(prepareDocument(gpu).body))).toEqual([]);
  }, 60_000);

  it('are skipped, not failed, on a probe that lacks the op', async () => {
    expect(L2_STRUCTURE_STRATEGY.requiredOps).toEqual(['l2.partition']);
    expect(L2_STRUCTURE_STRATEGY.optional).toBe(true);
    expect(L2_STRUCTURE_STRATEGY.build([], H100.device as never, null)).toEqual({ elements: {}, warnings: [] });
  });
});
