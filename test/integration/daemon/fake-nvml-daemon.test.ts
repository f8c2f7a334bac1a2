/**
 * The whole daemon as CI runs it: NVML is the fake library (two GPUs, live MIG
 * edits), measurements come from the simulated GPU chosen by device name.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../../helpers/daemon-process.js';
import { startFakeNvmlDaemon, writeScenario } from '../../helpers/fake-nvml-daemon.js';
import { eventually, getJson } from '../../helpers/http.js';
import { DAEMON_PROBE_WAIT_MS } from '../../helpers/probed-database.js';
import { useTempDir } from '../../helpers/temp-dir.js';
import { assertNativeBuilt } from '../nvml/fake-nvml.js';

const POLL_MS = 200;
const fixture = (name: string) => JSON.parse(readFileSync(path.join('test/fixtures/nvml', name), 'utf8')) as Record<string, any>;

const running: DaemonProcess[] = [];
afterEach(async () => {
  for (const d of running.splice(0)) await d.stop('SIGKILL');
});

/** NVML state reads so far, as /metrics counts them. */
async function nvmlPolls(baseUrl: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const count = /^topod_nvml_poll_duration_seconds_count (\d+)$/m.exec(text)?.[1];
  if (count === undefined) throw new Error('/metrics has no topod_nvml_poll_duration_seconds_count');
  return Number(count);
}

/** Collects SSE events from /v1/events until aborted. */
function listen(baseUrl: string): { events: Array<{ type: string; data: any }>; stop: () => void } {
  const events: Array<{ type: string; data: any }> = [];
  const abort = new AbortController();
  void (async () => {
    const response = await fetch(`${baseUrl}/v1/events`, { signal: abort.signal });
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const type = /^event: (.+)$/m.exec(block)?.[1];
        const data = /^data: (.+)$/m.exec(block)?.[1];
        if (type && data) events.push({ type, data: JSON.parse(data) });
      }
    }
  })().catch(() => undefined);
  return { events, stop: () => abort.abort() };
}

describe('daemon with fake NVML and the simulated backend', () => {
  const tempDir = useTempDir();

  it(
    'measures NVML GPUs, gives exact MIG L2 shares, and follows live scenario edits',
    async () => {
      assertNativeBuilt();
      const dir = tempDir();
      const scenarioPath = path.join(dir, 'scenario.json');
      const a100 = fixture('a100-40gb-mig-mixed.json');
      const h100 = fixture('h100-80gb-mig-mixed.json');
      // The H100's 3g.40gb GPU instance is split into two compute instances: two MIG devices sharing one L2 share.
      const h100Device = structuredClone(h100.devices[0]);
      const split = h100Device.gpuInstances.find((gi: any) => gi.profileId === 9);
      split.computeInstances = [
        { id: 0, multiprocessorCount: 30 },
        { id: 1, multiprocessorCount: 30, migDeviceUuid: 'MIG-0c1d2e3f-4a5b-5c6d-8e7f-90a1b2c3d4e5' },
      ];
      const scenario = { ...a100, devices: [a100.devices[0], { ...h100Device, pciBusId: '00000000:08:00.0' }] };
      const write = (value: unknown) => writeScenario(scenarioPath, value);
      write(scenario);

      const daemon = await startFakeNvmlDaemon(dir, scenarioPath, POLL_MS, { TOPOD_PROBE_CONCURRENCY: '2' });
      running.push(daemon);
      const base = daemon.baseUrl;

      const list = await getJson(`${base}/v1/gpus`);
      expect(list.body.gpus.map((g: any) => [g.uuid, g.name, g.driverVersion])).toEqual([
        [a100.devices[0].uuid, 'NVIDIA A100-SXM4-40GB', a100.driverVersion],
        [h100.devices[0].uuid, h100.devices[0].name, a100.driverVersion],
      ]);

      const ready = (id: string) =>
        eventually(
          () => getJson(`${base}/v1/gpus/${id}/topology`),
          (r) => r.status === 200,
          DAEMON_PROBE_WAIT_MS,
        );
      const a100Doc = (await ready(a100.devices[0].uuid)).body;
      const h100Doc = (await ready(h100.devices[0].uuid)).body;
      expect(a100Doc.simulated).toBe(true);
      expect(a100Doc.dynamic).toMatchObject({ available: true, driverVersion: a100.driverVersion });

      // L2 share = L2 × placement slices / 8 memory slices; 1g.5gb on a 40 MiB A100 is 5 MiB.
      const a100L2 = a100Doc.elements.l2.size.value as number;
      expect(a100L2).toBe(40 * 1024 * 1024);
      const byProfile = (doc: any, name: string) => doc.mig.instances.find((i: any) => i.profileName.endsWith(name));
      expect(byProfile(a100Doc, '1g.5gb').l2).toMatchObject({ bytes: 5 * 1024 * 1024, source: 'nvml' });
      expect(byProfile(a100Doc, '2g.10gb').l2.bytes).toBe(a100L2 / 4);
      expect(byProfile(a100Doc, '3g.20gb').l2.bytes).toBe(a100L2 / 2);
      const h100L2 = h100Doc.elements.l2.size.value as number;
      expect(byProfile(h100Doc, '1g.10gb').l2.bytes).toBe(h100L2 / 8);
      expect(byProfile(h100Doc, '2g.20gb').l2.bytes).toBe(h100L2 / 4);
      expect(byProfile(h100Doc, '3g.40gb').l2.bytes).toBe(h100L2 / 2);
      // One SM reaches at most one measured L2 segment.
      const segment = a100Doc.elements.l2.segmentSize?.value as number | undefined;
      if (segment) expect(byProfile(a100Doc, '3g.20gb').l2.reachablePerSmBytes).toBe(Math.min(a100L2 / 2, segment));

      // Every compute instance is a MIG device of its own: listed, and served with its SMs and its GPU instance's L2 share.
      const h100Summary = (await getJson(`${base}/v1/gpus/${h100.devices[0].uuid}`)).body;
      expect(h100Summary.migDeviceUuids).toEqual(expect.arrayContaining([split.migDeviceUuid, 'MIG-0c1d2e3f-4a5b-5c6d-8e7f-90a1b2c3d4e5']));
      for (const [uuid, ciId] of [
        [split.migDeviceUuid, 0],
        ['MIG-0c1d2e3f-4a5b-5c6d-8e7f-90a1b2c3d4e5', 1],
      ] as const) {
        const view = await getJson(`${base}/v1/gpus/${uuid}/topology`);
        expect(view.status).toBe(200);
        expect(view.body).toMatchObject({ migDeviceUuid: uuid, computeInstance: { id: ciId, multiprocessorCount: 30 } });
        expect(view.body.elements.l2.size.value).toBe(h100L2 / 2);
      }

      // The instance view by MIG UUID.
      const small = byProfile(a100Doc, '1g.5gb');
      const instance = await getJson(`${base}/v1/gpus/${small.migDeviceUuid}/topology`);
      expect(instance.status).toBe(200);
      expect(instance.body).toMatchObject({
        kind: 'mig-instance',
        migDeviceUuid: small.migDeviceUuid,
        parent: { uuid: a100.devices[0].uuid },
      });
      expect(instance.body.elements.l2.size.value).toBe(5 * 1024 * 1024);
      expect(instance.body.elements.l1).toEqual(a100Doc.elements.l1);

      // Live edit: destroy the 1g.5gb instance; the API and the event stream show it within two polls.
      const stream = listen(base);
      await new Promise((r) => setTimeout(r, 100));
      const edited = structuredClone(scenario);
      edited.devices[0].gpuInstances = edited.devices[0].gpuInstances.filter((gi: any) => gi.migDeviceUuid !== small.migDeviceUuid);
      // Counted in NVML polls, not milliseconds, so a busy machine cannot fail it: the poll that may be reading
      // the old file as it is replaced, the next one, and one more that may end between the two reads below.
      const pollsBefore = await nvmlPolls(base);
      write(edited);
      const seen = await eventually(
        async () => ({ topology: await getJson(`${base}/v1/gpus/${a100.devices[0].uuid}/topology`), polls: await nvmlPolls(base) }),
        (r) => r.topology.body.mig.instances.length === a100Doc.mig.instances.length - 1,
        30_000,
      );
      expect(seen.polls - pollsBefore).toBeLessThanOrEqual(3);
      expect((await getJson(`${base}/v1/gpus/${small.migDeviceUuid}/topology`)).status).toBe(404);
      await eventually(
        async () => stream.events,
        (e) => e.some((x) => x.type === 'mig.changed' && x.data.gpuUuid === a100.devices[0].uuid),
        30_000,
      );

      // A driver update: the result is served stale and a re-probe is queued with that reason.
      write({ ...edited, driverVersion: '590.10.01' });
      const stale = await eventually(
        () => getJson(`${base}/v1/gpus/0/topology`),
        (r) => r.body.status?.stale === true,
        30_000,
      );
      expect(stale.body.status).toMatchObject({ stale: true, staleReason: `driver changed from ${a100.driverVersion} to 590.10.01` });
      const jobs = await getJson(`${base}/v1/jobs?gpu=${a100.devices[0].uuid}`);
      expect(jobs.body.jobs[0].reason).toBe('driver-changed');
      stream.stop();
    },
    2 * DAEMON_PROBE_WAIT_MS + 60_000,
  );
});
