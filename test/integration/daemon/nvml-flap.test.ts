/**
 * Probe once, whichever source is up: an NVML outage while the daemon runs
 * must neither re-key the GPU (the probe runtime spells the driver
 * "cuda-13000", NVML "580.95.05") nor swap in the backend's own GPU list.
 * Before, each outage queued a driver-changed re-probe of every GPU.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../../helpers/daemon-process.js';
import { startFakeNvmlDaemon, useFakeNvmlProbedDatabase, writeScenario } from '../../helpers/fake-nvml-daemon.js';
import { eventually, getJson } from '../../helpers/http.js';
import { DAEMON_PROBE_WAIT_MS } from '../../helpers/probed-database.js';
import { useTempDir } from '../../helpers/temp-dir.js';
import { assertNativeBuilt } from '../nvml/fake-nvml.js';

const POLL_MS = 100;
const running: DaemonProcess[] = [];
afterEach(async () => {
  for (const d of running.splice(0)) await d.stop('SIGKILL');
});

describe('an NVML outage while the daemon runs', () => {
  const tempDir = useTempDir();

  it(
    'queues no new probe, keeps the GPU and its driver version, and /readyz says not ready meanwhile',
    async () => {
      assertNativeBuilt();
      const dir = tempDir();
      const scenarioPath = path.join(dir, 'scenario.json');
      const scenario = JSON.parse(readFileSync('test/fixtures/nvml/h100-80gb-mig-off.json', 'utf8')) as Record<string, any>;
      const write = (value: unknown) => writeScenario(scenarioPath, value);
      write(scenario);
      // From a database the GPU was already probed into (by a daemon on the same scenario, once per run).
      await useFakeNvmlProbedDatabase(dir, 'h100-80gb-mig-off.json');
      const daemon = await startFakeNvmlDaemon(dir, scenarioPath, POLL_MS);
      running.push(daemon);
      const base = daemon.baseUrl;
      const uuid = scenario.devices[0].uuid as string;
      const first = await eventually(
        () => getJson(`${base}/v1/gpus/${uuid}/topology`),
        (r) => r.status === 200,
        DAEMON_PROBE_WAIT_MS,
      );
      expect((await getJson(`${base}/readyz`)).status).toBe(200);

      for (let flap = 0; flap < 2; flap++) {
        write({ ...scenario, failures: { calls: { nvmlDeviceGetCount_v2: 'NVML_ERROR_UNKNOWN' } } });
        const down = await eventually(
          () => getJson(`${base}/readyz`),
          (r) => r.status === 503,
          30_000,
        );
        expect(down.body.checks.nvml).toMatchObject({ ok: false });
        // Several polls without NVML: the GPU stays listed as NVML last reported it.
        await new Promise((r) => setTimeout(r, 4 * POLL_MS));
        const during = await getJson(`${base}/v1/gpus`);
        expect(during.body.gpus.map((g: any) => [g.uuid, g.driverVersion, g.present])).toEqual([[uuid, scenario.driverVersion, true]]);
        write(scenario);
        await eventually(
          () => getJson(`${base}/readyz`),
          (r) => r.status === 200,
          30_000,
        );
      }

      await new Promise((r) => setTimeout(r, 3 * POLL_MS));
      const jobs = await getJson(`${base}/v1/jobs`);
      expect(jobs.body.jobs.map((j: any) => j.reason)).toEqual(['first-probe']);
      const after = await getJson(`${base}/v1/gpus/${uuid}/topology`);
      expect(after.body.probe.resultId).toBe(first.body.probe.resultId);
      expect(after.body.status).toMatchObject({ stale: false });
      expect((await getJson(`${base}/v1/gpus`)).body.gpus).toMatchObject([
        { uuid, driverVersion: scenario.driverVersion, driverSource: 'nvml' },
      ]);
    },
    DAEMON_PROBE_WAIT_MS + 60_000,
  );
});
