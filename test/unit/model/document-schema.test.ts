/**
 * The document schemas against documents the real builders make from real
 * data (a stored H100 probe, the fake-NVML MIG scenarios), and against broken
 * copies of them: the schemas must accept the first and reject every second.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { NvmlDeviceState } from '../../../server/dynamic/types.js';
import { DOCUMENT_SCHEMA_VERSION, type ResultDocument } from '../../../server/model/document.js';
import { openDatabase } from '../../../server/store/database.js';
import { GpuStore } from '../../../server/store/gpus.js';
import { ResultStore } from '../../../server/store/results.js';
import { mergeMigInstance, mergeTopology, type DynamicPart, type MergedTopology } from '../../../server/topology/merge.js';
import { prepareDocument } from '../../../server/topology/prepare.js';
import { documentErrors } from '../../helpers/document-validator.js';
import { gpuIdentity } from '../../helpers/fakes.js';
import { makeGpu } from '../../integration/api/fake-topology.js';
import { deviceState, firstDevice } from '../dynamic/scenario-device.js';

/** The document a real H100 probe stored (schemaVersion 1, analysis cpd-ks-3). */
const recordedV1 = (
  JSON.parse(readFileSync(new URL('../../fixtures/h100/discovery-run.json', import.meta.url), 'utf8')) as { document: ResultDocument }
).document;
/** The recorded document brought to the current shape: schema version, and no carveout recorded (it predates the record). */
const asCurrent = (document: ResultDocument): ResultDocument => ({
  ...structuredClone(document),
  schemaVersion: DOCUMENT_SCHEMA_VERSION,
  carveout: null,
});

const h100Mig = deviceState(firstDevice('h100-80gb-mig-mixed.json'));
const a100MigNoPlacements = deviceState(firstDevice('a100-40gb-mig-mixed.json'), { hidePlacements: true, hideInstancePlacements: true });

function dynamicOf(device: NvmlDeviceState | null): DynamicPart {
  return device
    ? { available: true, reason: null, driverVersion: '580.159.04', device }
    : { available: false, reason: 'libnvidia-ml.so.1 not found', driverVersion: null, device: null };
}

/** As served: through the same serialisation the topology service uses. */
const served = (document: unknown): Record<string, any> => JSON.parse(prepareDocument(document).body) as Record<string, any>;

function merged(result: ResultDocument, device: NvmlDeviceState | null = h100Mig): MergedTopology {
  return mergeTopology(result, { summary: makeGpu({ uuid: result.gpu.uuid }), jobUrl: null }, dynamicOf(device));
}

function migDocuments(parent: MergedTopology): Array<Record<string, any>> {
  const uuids = (parent.mig?.instances ?? []).flatMap((instance) => (instance.migDeviceUuid ? [instance.migDeviceUuid] : []));
  return uuids.map((uuid) => served(mergeMigInstance(parent, uuid)));
}

describe('GpuTopologyDocument and MigInstanceTopologyDocument accept what the builders make', () => {
  it('a real H100 result merged with live MIG state, and each of its MIG instance views', () => {
    const gpu = merged(asCurrent(recordedV1));
    expect(documentErrors('GpuTopologyDocument', served(gpu))).toEqual([]);
    const instances = migDocuments(gpu);
    expect(instances.length).toBeGreaterThan(1);
    for (const instance of instances) expect(documentErrors('MigInstanceTopologyDocument', instance)).toEqual([]);
  });

  it.each([
    ['MIG state without readable placements (shares derived)', asCurrent(recordedV1), a100MigNoPlacements],
    ['NVML unavailable (no MIG view)', asCurrent(recordedV1), null],
    ['a result rebuilt from raw series without a hello (device {})', { ...asCurrent(recordedV1), device: {} }, h100Mig],
    [
      'a partial probe with no clock',
      { ...asCurrent(recordedV1), clock: null, probe: { ...recordedV1.probe, only: ['l1'] } } as ResultDocument,
      h100Mig,
    ],
    [
      'a re-analysed result',
      {
        ...asCurrent(recordedV1),
        probe: { ...recordedV1.probe, resultId: 7, reanalysedFrom: { resultId: 3, analysisVersion: 'cpd-ks-2' } },
      },
      h100Mig,
    ],
  ])('%s', (_label, result, device) => {
    const gpu = merged(result, device);
    expect(documentErrors('GpuTopologyDocument', served(gpu))).toEqual([]);
    for (const instance of migDocuments(gpu)) expect(documentErrors('MigInstanceTopologyDocument', instance)).toEqual([]);
  });

  it('tells the two documents apart: each is valid against its own schema only', () => {
    const gpu = merged(asCurrent(recordedV1));
    const [instance] = migDocuments(gpu);
    expect(documentErrors('MigInstanceTopologyDocument', served(gpu))).not.toEqual([]);
    expect(documentErrors('GpuTopologyDocument', instance)).not.toEqual([]);
  });
});

describe('a stored schemaVersion 1 document', () => {
  it('is read from SQLite, merged and served without error, and differs from the current version only in its version', () => {
    const db = openDatabase(':memory:');
    const identity = gpuIdentity({ uuid: recordedV1.gpu.uuid });
    new GpuStore(db).seen(identity);
    const results = new ResultStore(db);
    const id = results.insert({
      gpuUuid: identity.uuid,
      driverVersion: recordedV1.probe.driverVersion,
      probeVersion: recordedV1.probe.probeVersion,
      analysisVersion: recordedV1.probe.analysisVersion,
      configuration: { backend: 'native' },
      createdAt: recordedV1.probe.finishedAt,
      durationMs: recordedV1.probe.durationMs,
      simulated: false,
      jobId: null,
      document: recordedV1,
      raw: [],
    });
    const stored = results.get(id)!.document;
    expect(stored.schemaVersion).toBe(1);

    const gpu = merged(stored);
    const instances = migDocuments(gpu);
    expect(served(gpu).schemaVersion).toBe(1);
    expect(documentErrors('GpuTopologyDocument', served(gpu))).toEqual(['/schemaVersion: must be equal to constant']);
    for (const instance of instances)
      expect(documentErrors('MigInstanceTopologyDocument', instance)).toEqual(['/schemaVersion: must be equal to constant']);
    db.close();
  });
});

describe('the schemas are closed and typed', () => {
  const valid = served(merged(asCurrent(recordedV1)));
  const validInstance = migDocuments(merged(asCurrent(recordedV1)))[0]!;

  /** A deep copy of `document` with `change` applied. */
  const broken = (document: Record<string, any>, change: (copy: Record<string, any>) => void) => {
    const copy = structuredClone(document);
    change(copy);
    return copy;
  };

  it.each<[string, (d: Record<string, any>) => void, string]>([
    ['an unknown top-level field', (d) => (d.extra = 1), '/: must NOT have additional properties (extra)'],
    [
      'an unknown field in a measured value',
      (d) => (d.elements.l1.size.margin = 'x'),
      '/elements/l1/size: must NOT have additional properties (margin)',
    ],
    [
      'a bound that is neither lower nor upper',
      (d) => (d.elements.l1.size.bound = 'about'),
      '/elements/l1/size/bound: must be equal to one of the allowed values',
    ],
    [
      'an unknown field in the carveout',
      (d) => (d.carveout = { preferredSharedPercent: 0, blockSharedBytes: 1, reservedSharedBytesPerBlock: null, note: '', l1Bytes: 1 }),
      '/carveout: must NOT have additional properties (l1Bytes)',
    ],
    ['an unknown element name', (d) => (d.elements.l4 = {}), '/elements: must NOT have additional properties (l4)'],
    [
      'an unknown field in a latency',
      (d) => (d.elements.l2.latency.p99 = 1),
      '/elements/l2/latency: must NOT have additional properties (p99)',
    ],
    ['an unknown device property', (d) => (d.device.clockRateMHz = 1), '/device: must NOT have additional properties (clockRateMHz)'],
    ['an unknown field in the status', (d) => (d.status.eta = 1), '/status: must NOT have additional properties (eta)'],
    [
      'an unknown field in the live NVML device',
      (d) => (d.dynamic.device.memoryUsedBytes = 1),
      '/dynamic/device: must NOT have additional properties (memoryUsedBytes)',
    ],
    [
      'an unknown field in an L2 share',
      (d) => (d.mig.instances[0].l2.ways = 4),
      '/mig/instances/0/l2: must NOT have additional properties (ways)',
    ],
    [
      'an unknown field in reanalysedFrom',
      (d) => (d.probe.reanalysedFrom = { resultId: 1, analysisVersion: 'a', at: 'now' }),
      '/probe/reanalysedFrom: must NOT have additional properties (at)',
    ],
    ['a value that is a string', (d) => (d.elements.l1.size.value = '240640'), '/elements/l1/size/value: must be number'],
    [
      'a unit outside the list',
      (d) => (d.elements.l1.size.unit = 'bits'),
      '/elements/l1/size/unit: must be equal to one of the allowed values',
    ],
    [
      'a source outside the list',
      (d) => (d.elements.l2.size.source = 'guess'),
      '/elements/l2/size/source: must be equal to one of the allowed values',
    ],
    ['a confidence above 1', (d) => (d.elements.l1.size.confidence = 1.5), '/elements/l1/size/confidence: must be <= 1'],
    ['a timestamp that is not one', (d) => (d.probe.startedAt = 'yesterday'), '/probe/startedAt: must match format "date-time"'],
    ['a null where a boolean goes', (d) => (d.status.stale = null), '/status/stale: must be boolean'],
    [
      'a fractional SM count',
      (d) => (d.mig.instances[0].multiprocessorCount = 16.5),
      '/mig/instances/0/multiprocessorCount: must be integer',
    ],
    ['another schemaVersion', (d) => (d.schemaVersion = DOCUMENT_SCHEMA_VERSION + 1), '/schemaVersion: must be equal to constant'],
    ['no status', (d) => delete d.status, "/: must have required property 'status'"],
  ])('GpuTopologyDocument rejects %s', (_label, change, error) => {
    expect(documentErrors('GpuTopologyDocument', valid)).toEqual([]);
    expect(documentErrors('GpuTopologyDocument', broken(valid, change))).toContain(error);
  });

  it.each<[string, (d: Record<string, any>) => void, string]>([
    ['an unknown top-level field', (d) => (d.extra = 1), '/: must NOT have additional properties (extra)'],
    ['an unknown field in the parent', (d) => (d.parent.index = 0), '/parent: must NOT have additional properties (index)'],
    ['an unknown field in the instance', (d) => (d.instance.sliceCount = 1), '/instance: must NOT have additional properties (sliceCount)'],
    ['another kind', (d) => (d.kind = 'gpu'), '/kind: must be equal to constant'],
    ['L2 share bytes that are a string', (d) => (d.instance.l2.bytes = '1'), '/instance/l2/bytes: must be integer'],
  ])('MigInstanceTopologyDocument rejects %s', (_label, change, error) => {
    expect(documentErrors('MigInstanceTopologyDocument', validInstance)).toEqual([]);
    expect(documentErrors('MigInstanceTopologyDocument', broken(validInstance, change))).toContain(error);
  });
});
