/**
 * The whole daemon (simulated GPUs measured by name, fake NVML with MIG
 * instances on an A100 and an H100) answers GET /v1/gpus/{id}/topology with
 * documents valid against the schemas its own /openapi.json publishes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonProcess } from '../../helpers/daemon-process.js';
import { documentErrors, publishedDocumentErrors } from '../../helpers/document-validator.js';
import { getJson } from '../../helpers/http.js';
import { useTempDir } from '../../helpers/temp-dir.js';
import { assertNativeBuilt, FAKE_LIBRARY } from '../nvml/fake-nvml.js';
import { DOCUMENT_SCHEMA_VERSION } from '../../../server/model/document.js';

const fixture = (name: string) => JSON.parse(readFileSync(path.join('test/fixtures/nvml', name), 'utf8')) as Record<string, any>;

const running: DaemonProcess[] = [];
afterEach(async () => {
  for (const d of running.splice(0)) await d.stop('SIGKILL');
});

async function whenReady(url: string, timeoutMs: number): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status, body } = await getJson(url);
    if (status === 200) return body as Record<string, any>;
    if (Date.now() > deadline) throw new Error(`${url} still answers ${status}: ${JSON.stringify(body).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('daemon topology responses against its /openapi.json', () => {
  const tempDir = useTempDir();

  it('validates every GPU document and every MIG instance document', async () => {
    assertNativeBuilt();
    const dir = tempDir();
    const a100 = fixture('a100-40gb-mig-mixed.json');
    const h100 = fixture('h100-80gb-mig-mixed.json');
    const scenarioPath = path.join(dir, 'scenario.json');
    writeFileSync(
      scenarioPath,
      JSON.stringify({ ...a100, devices: [a100.devices[0], { ...h100.devices[0], pciBusId: '00000000:08:00.0' }] }),
    );

    const daemon = await startDaemon({
      TOPOD_BACKEND: 'sim',
      TOPOD_DB: path.join(dir, 'topod.sqlite'),
      TOPOD_NVML_LIB: FAKE_LIBRARY,
      TOPOD_FAKE_NVML_SCENARIO: scenarioPath,
      TOPOD_PROBE_CONCURRENCY: '2',
    });
    running.push(daemon);
    const base = daemon.baseUrl;
    const published = publishedDocumentErrors(
      (await getJson(`${base}/openapi.json`)).body as { components: { schemas: Record<string, unknown> } },
    );

    let instancesChecked = 0;
    for (const gpu of [a100.devices[0], h100.devices[0]]) {
      const document = await whenReady(`${base}/v1/gpus/${gpu.uuid}/topology`, 60_000);
      expect(document).toMatchObject({ schemaVersion: DOCUMENT_SCHEMA_VERSION, gpu: { uuid: gpu.uuid }, dynamic: { available: true } });
      expect(documentErrors('GpuTopologyDocument', document)).toEqual([]);
      expect(published('GpuTopologyDocument', document)).toEqual([]);

      const migUuids = (document.mig.instances as Array<{ migDeviceUuid: string | null }>).flatMap((i) =>
        i.migDeviceUuid ? [i.migDeviceUuid] : [],
      );
      expect(migUuids.length).toBeGreaterThan(0);
      for (const uuid of migUuids) {
        const { status, body } = await getJson(`${base}/v1/gpus/${uuid}/topology`);
        expect(status).toBe(200);
        expect(body).toMatchObject({
          schemaVersion: DOCUMENT_SCHEMA_VERSION,
          kind: 'mig-instance',
          migDeviceUuid: uuid,
          parent: { uuid: gpu.uuid },
        });
        expect(documentErrors('MigInstanceTopologyDocument', body)).toEqual([]);
        expect(published('MigInstanceTopologyDocument', body)).toEqual([]);
        instancesChecked++;
      }
    }
    expect(instancesChecked).toBeGreaterThan(2);
  }, 120_000);
});
