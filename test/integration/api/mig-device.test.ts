/**
 * GET /v1/gpus/{MIG-uuid} answers the MIG device itself — its GPU and compute
 * instance, profile, SMs, memory and L2 share, the numbers the MIG view has —
 * and not its parent GPU's summary (which it used to answer). Built on the
 * real topology service, as the daemon serves it.
 */
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../server/app.js';
import { MigDeviceSummarySchema } from '../../../server/model/gpu-schema.js';
import type { MigDeviceSummary } from '../../../server/model/gpu.js';
import { openDatabase } from '../../../server/store/database.js';
import { GpuStore } from '../../../server/store/gpus.js';
import { JobStore } from '../../../server/store/jobs.js';
import { ResultStore } from '../../../server/store/results.js';
import { mergeMigInstance } from '../../../server/topology/merge.js';
import { migDeviceSummary } from '../../../server/topology/mig-device.js';
import { ProbePolicy } from '../../../server/topology/probe-policy.js';
import { TopologyService } from '../../../server/topology/service.js';
import { mergedGpu, recordedH100Result } from '../../helpers/face-documents.js';
import { gpuIdentity, silentLogger } from '../../helpers/fakes.js';
import { deviceState, firstDevice, snapshotOf } from '../../unit/dynamic/scenario-device.js';
import { PROBLEM_TYPE } from './harness.js';

const SCENARIO = 'h100-80gb-mig-mixed.json';
const GI_3G = 'MIG-5d8e1f2a-3b4c-5d6e-8f70-81a2b3c4d5e6';
/** A second compute instance in the 3g GPU instance, a MIG device of its own. */
const CI_SECOND = 'MIG-0c1d2e3f-4a5b-5c6d-8e7f-90a1b2c3d4e5';
const validMigDevice = new Ajv({ strict: true, allErrors: true }).compile(MigDeviceSummarySchema);

/** The daemon's service with no backend, NVML listing the scenario's H100 (MIG on, a 3g instance split in two compute instances). */
async function serve(): Promise<{ app: FastifyInstance; gpuUuid: string }> {
  const db = openDatabase(':memory:');
  const jobs = new JobStore(db);
  const policy = new ProbePolicy({ results: new ResultStore(db), probeVersion: null, isOutdated: null });
  const service = new TopologyService({
    jobs,
    scheduler: null,
    policy,
    lifecycle: null,
    store: { check: () => ({ ok: true, detail: 'fake' }) },
    noBackendReason: 'no GPU here',
    logger: silentLogger,
  });
  const device = deviceState(firstDevice(SCENARIO));
  const gi = device.mig.instances.find((i) => i.migDeviceUuid === GI_3G)!;
  gi.computeInstances = [
    { id: 0, profileId: null, multiprocessorCount: 30, migDeviceUuid: GI_3G },
    { id: 1, profileId: null, multiprocessorCount: 30, migDeviceUuid: CI_SECOND },
  ];
  const identity = gpuIdentity({ uuid: device.uuid, name: device.name });
  new GpuStore(db).seen(identity);
  service.applySnapshot(snapshotOf([device]));
  service.syncGpus([identity], 'boot');
  const app = await buildApp({
    config: { adminToken: null, bodyLimitBytes: 16 * 1024 },
    topology: service,
    logger: false,
    version: '0.0.0-test',
  });
  await app.ready();
  return { app, gpuUuid: device.uuid };
}

describe('GET /v1/gpus/{MIG device UUID}', () => {
  let app: FastifyInstance | undefined;
  afterEach(() => app?.close());

  it('answers the MIG device, not its parent GPU', async () => {
    const served = await serve();
    app = served.app;
    const res = await app.inject({ method: 'GET', url: `/v1/gpus/${GI_3G}` });
    expect(res.statusCode).toBe(200);
    const body = res.json() as MigDeviceSummary;
    expect(body).toEqual({
      kind: 'mig-device',
      uuid: GI_3G,
      parent: { uuid: served.gpuUuid, index: 0, name: expect.any(String) },
      gpuInstanceId: 2,
      computeInstanceId: 0,
      profileId: 9,
      profileName: expect.stringMatching(/3g/),
      placement: { start: 0, size: 4 },
      multiprocessorCount: 30,
      memorySizeBytes: expect.any(Number),
      // No result yet (no backend): the share's slices are known, its bytes not.
      l2: { bytes: null, memorySlices: 4, source: 'nvml', reachablePerSmBytes: null, partitions: null },
      simulated: false,
    });
    expect(validMigDevice(body), JSON.stringify(validMigDevice.errors)).toBe(true);
    expect(body).not.toHaveProperty('migDeviceUuids');
  });

  it('tells compute instances of one GPU instance apart, and reads UUIDs in any case', async () => {
    app = (await serve()).app;
    const second = (await app.inject({ method: 'GET', url: `/v1/gpus/${CI_SECOND.toLowerCase()}` })).json() as MigDeviceSummary;
    expect(second).toMatchObject({
      kind: 'mig-device',
      uuid: CI_SECOND,
      gpuInstanceId: 2,
      computeInstanceId: 1,
      multiprocessorCount: 30,
      placement: { start: 0, size: 4 },
    });
    const small = (
      await app.inject({ method: 'GET', url: '/v1/gpus/MIG-7fa03b4c-5d6e-5f70-a182-a3c4d5e6f708' })
    ).json() as MigDeviceSummary;
    expect(small).toMatchObject({ gpuInstanceId: 9, profileId: 19, multiprocessorCount: 16, l2: { memorySlices: 1, source: 'nvml' } });
  });

  it('GPU index and GPU UUID still answer the GPU; an unknown MIG UUID is a 404 problem', async () => {
    const served = await serve();
    app = served.app;
    const byIndex = await app.inject({ method: 'GET', url: '/v1/gpus/0' });
    expect(byIndex.json()).toMatchObject({ uuid: served.gpuUuid, index: 0, migDeviceUuids: expect.arrayContaining([GI_3G, CI_SECOND]) });
    expect(byIndex.json()).not.toHaveProperty('kind');
    expect((await app.inject({ method: 'GET', url: `/v1/gpus/${served.gpuUuid}` })).json().uuid).toBe(served.gpuUuid);
    const unknown = await app.inject({ method: 'GET', url: '/v1/gpus/MIG-00000000-0000-0000-0000-000000000000' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toMatch(PROBLEM_TYPE);
  });

  it('is documented in OpenAPI as a closed MigDeviceSummary next to the GPU summary', async () => {
    app = (await serve()).app;
    const spec = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const schema = spec.paths['/v1/gpus/{id}'].get.responses['200'].content['application/json'].schema;
    expect(JSON.stringify(schema)).toContain('MigDeviceSummary');
    expect(JSON.stringify(schema)).toContain('GpuSummary');
    expect(spec.components.schemas.MigDeviceSummary).toMatchObject({
      additionalProperties: false,
      properties: { kind: { enum: ['mig-device'] } },
    });
  });
});

describe('migDeviceSummary', () => {
  it('has the numbers of the MIG instance document for the same device (L2 share measured)', () => {
    const { merged, summary, migUuids } = mergedGpu(recordedH100Result(), SCENARIO);
    expect(migUuids.length).toBeGreaterThan(0);
    for (const uuid of migUuids) {
      const device = migDeviceSummary(summary, merged.mig!, uuid)!;
      const view = mergeMigInstance(merged, uuid)!;
      expect(device.l2).toEqual(view.instance.l2);
      expect(device.l2.bytes).toBeGreaterThan(0);
      expect(device).toMatchObject({
        uuid,
        parent: { uuid: summary.uuid, index: summary.index, name: summary.name },
        gpuInstanceId: view.instance.gpuInstanceId,
        profileName: view.instance.profileName,
        memorySizeBytes: view.instance.memorySizeBytes,
        multiprocessorCount: view.computeInstance?.multiprocessorCount ?? view.instance.multiprocessorCount,
        simulated: summary.simulated,
      });
      expect(validMigDevice(device), JSON.stringify(validMigDevice.errors)).toBe(true);
    }
    expect(migDeviceSummary(summary, merged.mig!, 'MIG-not-there')).toBeNull();
  });
});
