/**
 * GET /v1/gpus/{id}/topology answers what /openapi.json promises: documents
 * the real builders make from a simulated H100 probe merged with a fake-NVML
 * MIG scenario, served through the route, validated against the schemas
 * (as TypeBox defines them and as /openapi.json publishes them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYSIS_VERSION } from '../../../server/discovery/index.js';
import { buildResultDocument } from '../../../server/results/result-document.js';
import type { TopologyLookup } from '../../../server/model/topology-api.js';
import { mergeMigInstance, mergeTopology } from '../../../server/topology/merge.js';
import { prepareDocument } from '../../../server/topology/prepare.js';
import { documentErrors, publishedDocumentErrors, type DocumentKind } from '../../helpers/document-validator.js';
import { SHARED_H100_SEED, simulatedDiscovery, WHOLE_DISCOVERY_TIMEOUT_MS } from '../../helpers/simulated-discovery.js';
import { deviceState, firstDevice } from '../../unit/dynamic/scenario-device.js';
import { FakeTopology, makeGpu } from './fake-topology.js';
import { buildTestApp, type TestApp } from './harness.js';
import { DOCUMENT_SCHEMA_VERSION } from '../../../server/model/document.js';

/** Serves one prepared document per id asked (GPU index, GPU UUID or MIG UUID). */
class ServedTopology extends FakeTopology {
  readonly documents = new Map<string, TopologyLookup>();

  override getTopology(id: string): TopologyLookup {
    return this.documents.get(id) ?? super.getTopology(id);
  }
}

describe('topology responses against the document schemas', () => {
  let t: TestApp;
  let published: (kind: DocumentKind, document: unknown) => string[];
  const migUuids: string[] = [];

  beforeAll(async () => {
    // The suite's one shared simulated H100 discovery (run once per test run, as the faces' tests use it).
    const { outcome, gpu, probeVersion, startedAt, finishedAt } = await simulatedDiscovery({
      model: 'h100-sxm5-80gb',
      seed: SHARED_H100_SEED,
    });
    const result = buildResultDocument(
      outcome,
      {
        gpu,
        simulated: true,
        probeVersion,
        analysisVersion: ANALYSIS_VERSION,
        jobId: 'job-1',
        only: null,
        startedAt,
        finishedAt,
      },
      null,
    );

    const device = { ...deviceState(firstDevice('h100-80gb-mig-mixed.json')), uuid: gpu.uuid };
    for (const instance of device.mig.instances) if (instance.migDeviceUuid) migUuids.push(instance.migDeviceUuid);
    const summary = makeGpu({ uuid: gpu.uuid, name: gpu.name, migDeviceUuids: migUuids });
    const merged = mergeTopology(
      result,
      { summary, jobUrl: '/v1/jobs/job-2' },
      { available: true, reason: null, driverVersion: gpu.driverVersion, device },
    );

    const topology = new ServedTopology();
    topology.gpus = [summary];
    topology.documents.set('0', { kind: 'ready', document: prepareDocument(merged) });
    for (const uuid of migUuids)
      topology.documents.set(uuid, {
        kind: 'ready',
        document: prepareDocument(mergeMigInstance(merged, uuid) as NonNullable<ReturnType<typeof mergeMigInstance>>),
      });
    t = await buildTestApp({ topology });
    published = publishedDocumentErrors((await t.app.inject({ method: 'GET', url: '/openapi.json' })).json());
  }, WHOLE_DISCOVERY_TIMEOUT_MS);
  afterAll(() => t?.app.close());

  const get = async (id: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/gpus/${id}/topology` });
    expect(res.statusCode).toBe(200);
    return res.json() as Record<string, any>;
  };

  it('a whole GPU: the merged document with its MIG view', async () => {
    const body = await get('0');
    expect(body).toMatchObject({
      schemaVersion: DOCUMENT_SCHEMA_VERSION,
      simulated: true,
      status: { activeJob: '/v1/jobs/job-2' },
      dynamic: { available: true },
    });
    expect(body.mig.instances.length).toBe(migUuids.length);
    expect(Object.keys(body.elements)).toEqual(expect.arrayContaining(['l1', 'l2', 'deviceMemory']));
    expect(documentErrors('GpuTopologyDocument', body)).toEqual([]);
    expect(published('GpuTopologyDocument', body)).toEqual([]);
    expect(published('MigInstanceTopologyDocument', body)).not.toEqual([]);
  });

  it('each MIG device: the instance view', async () => {
    expect(migUuids.length).toBeGreaterThan(1);
    for (const uuid of migUuids) {
      const body = await get(uuid);
      expect(body).toMatchObject({ schemaVersion: DOCUMENT_SCHEMA_VERSION, kind: 'mig-instance', migDeviceUuid: uuid });
      expect(documentErrors('MigInstanceTopologyDocument', body)).toEqual([]);
      expect(published('MigInstanceTopologyDocument', body)).toEqual([]);
      expect(published('GpuTopologyDocument', body)).not.toEqual([]);
    }
  });

  it('publishes every part of the documents once, by name, and closes every object in them', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      components: { schemas: Record<string, unknown> };
    };
    const parts = reachableSchemas(spec.components.schemas, ['GpuTopologyDocument', 'MigInstanceTopologyDocument']);
    expect([...parts.keys()]).toEqual(
      expect.arrayContaining([
        'MeasuredValue',
        'LatencyValue',
        'ElementTopology',
        'TopologyElements',
        'ProbeRun',
        'DeviceProperties',
        'TopologyStatus',
        'DynamicState',
        'MigView',
        'MigInstance',
        'MigL2Share',
      ]),
    );
    expect(Object.keys(spec.components.schemas).filter((name) => name.includes('-'))).toEqual([]);
    const open: string[] = [];
    for (const [name, schema] of parts)
      walk(schema, (node, at) => node.type === 'object' && node.additionalProperties !== false && open.push(`${name}${at}`));
    expect(open).toEqual([]);
  });
});

type SchemaNode = Record<string, unknown>;

function walk(node: unknown, visit: (node: SchemaNode, at: string) => void, at = ''): void {
  if (node === null || typeof node !== 'object') return;
  if (!Array.isArray(node)) visit(node as SchemaNode, at);
  for (const [key, child] of Object.entries(node)) walk(child, visit, `${at}/${key}`);
}

/** The component schemas `roots` reach through $refs, roots included. */
function reachableSchemas(schemas: Record<string, unknown>, roots: string[]): Map<string, unknown> {
  const found = new Map<string, unknown>();
  const queue = [...roots];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (found.has(name)) continue;
    found.set(name, schemas[name]);
    walk(schemas[name], (node) => {
      if (typeof node.$ref === 'string') queue.push(node.$ref.replace('#/components/schemas/', ''));
    });
  }
  return found;
}
