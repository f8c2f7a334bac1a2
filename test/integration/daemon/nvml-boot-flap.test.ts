/**
 * The simulator beside NVML, with NVML failing transiently (issue 11): the
 * GPU keeps its identity. Before, NVML failing when the daemon started
 * listed the simulator's own GPU instead (a phantom that got a full probe),
 * and once NVML answered again the real GPU was "added" beside it: two GPUs
 * with index 0 until restart. And a MIG change made while NVML was down is
 * not lost when it comes back.
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

// Each starts from a database the GPU was already probed into (by a daemon on the same scenario, once per run).
describe('NVML failing while the simulator measures its GPUs', () => {
  const tempDir = useTempDir();

  it(
    'at boot: lists the GPU NVML reported before (no phantom, no probe), and the same GPU once NVML answers',
    async () => {
      assertNativeBuilt();
      const dir = tempDir();
      const scenarioPath = path.join(dir, 'scenario.json');
      const scenario = JSON.parse(readFileSync('test/fixtures/nvml/h100-80gb-mig-off.json', 'utf8')) as Record<string, any>;
      const uuid = scenario.devices[0].uuid as string;
      writeScenario(scenarioPath, scenario);
      await useFakeNvmlProbedDatabase(dir, 'h100-80gb-mig-off.json');
      const first = await startFakeNvmlDaemon(dir, scenarioPath, POLL_MS);
      running.push(first);
      await eventually(
        () => getJson(`${first.baseUrl}/v1/gpus/${uuid}/topology`),
        (r) => r.status === 200,
        DAEMON_PROBE_WAIT_MS,
      );
      await first.stop('SIGTERM');
      running.splice(0);

      writeScenario(scenarioPath, { ...scenario, failures: { calls: { nvmlDeviceGetCount_v2: 'NVML_ERROR_UNKNOWN' } } });
      const second = await startFakeNvmlDaemon(dir, scenarioPath, POLL_MS);
      running.push(second);
      const events: string[] = [];
      const controller = new AbortController();
      void fetch(`${second.baseUrl}/v1/events`, { signal: controller.signal }).then(async (res) => {
        const reader = res.body?.getReader();
        for (;;) {
          const chunk = await reader?.read().catch(() => undefined);
          if (!chunk || chunk.done) return;
          for (const m of new TextDecoder().decode(chunk.value).matchAll(/event: (\S+)/g)) events.push(m[1] as string);
        }
      });
      const during = await getJson(`${second.baseUrl}/v1/gpus`);
      expect(during.body.gpus.map((g: any) => [g.uuid, g.index, g.present])).toEqual([[uuid, 0, true]]);
      expect((await getJson(`${second.baseUrl}/v1/gpus/${uuid}/topology`)).status).toBe(200);

      writeScenario(scenarioPath, scenario);
      await eventually(
        () => getJson(`${second.baseUrl}/readyz`),
        (r) => r.status === 200 && /driver/.test(r.body.checks.nvml.detail),
        30_000,
      );
      await new Promise((r) => setTimeout(r, 5 * POLL_MS));
      const after = await getJson(`${second.baseUrl}/v1/gpus`);
      expect(after.body.gpus.map((g: any) => [g.uuid, g.index, g.present, g.driverSource])).toEqual([[uuid, 0, true, 'nvml']]);
      const jobs = await getJson(`${second.baseUrl}/v1/jobs`);
      expect(jobs.body.jobs.map((j: any) => j.reason)).toEqual(['first-probe']);
      expect(events.filter((e) => e === 'gpu.removed' || e === 'gpu.added')).toEqual([]);
      controller.abort();
    },
    DAEMON_PROBE_WAIT_MS + 60_000,
  );

  it(
    'a MIG change made while NVML was down is seen when it answers again',
    async () => {
      assertNativeBuilt();
      const dir = tempDir();
      const scenarioPath = path.join(dir, 'scenario.json');
      const off = JSON.parse(readFileSync('test/fixtures/nvml/h100-80gb-mig-off.json', 'utf8')) as Record<string, any>;
      const mixed = JSON.parse(readFileSync('test/fixtures/nvml/h100-80gb-mig-mixed.json', 'utf8')) as Record<string, any>;
      const uuid = off.devices[0].uuid as string;
      // The same board, partitioned.
      mixed.devices[0].uuid = uuid;
      writeScenario(scenarioPath, off);
      await useFakeNvmlProbedDatabase(dir, 'h100-80gb-mig-off.json');
      const daemon = await startFakeNvmlDaemon(dir, scenarioPath, POLL_MS);
      running.push(daemon);
      const before = await eventually(
        () => getJson(`${daemon.baseUrl}/v1/gpus/${uuid}/topology`),
        (r) => r.status === 200,
        DAEMON_PROBE_WAIT_MS,
      );
      writeScenario(scenarioPath, { ...off, failures: { calls: { nvmlDeviceGetCount_v2: 'NVML_ERROR_UNKNOWN' } } });
      await eventually(
        () => getJson(`${daemon.baseUrl}/readyz`),
        (r) => r.status === 503,
        30_000,
      );
      // The partition changes while NVML is away, and NVML comes back already showing it.
      writeScenario(scenarioPath, mixed);
      const after = await eventually(
        () => getJson(`${daemon.baseUrl}/v1/gpus/${uuid}/topology`),
        (r) => r.status === 200 && r.body.dynamic.available === true && JSON.stringify(r.body.mig) !== JSON.stringify(before.body.mig),
        30_000,
      );
      expect((await getJson(`${daemon.baseUrl}/v1/gpus/${uuid}`)).body.migDeviceUuids.length).toBeGreaterThan(0);
    },
    DAEMON_PROBE_WAIT_MS + 60_000,
  );
});
