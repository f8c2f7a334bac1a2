/**
 * A shared GPU (issue 17): the daemon looks through NVML — the real addon on
 * the fake libnvidia-ml — before and during each probe. A busy GPU's probe
 * waits and runs once it is idle; a tenant arriving mid-probe drops what was
 * measured; evenIfBusy / TOPOD_PROBE_WHEN=always measures anyway and says so;
 * a GPU busy past the longest wait fails the job with TOPOD_ERR_GPU_BUSY; a
 * tenant the measurements themselves showed drops the probe as NVML's does.
 * The measurement is a fake the test releases, so only the policy is timed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../server/config.js';
import { createDaemon, type Daemon } from '../../../server/daemon.js';
import type { ProbeJob } from '../../../server/model/job.js';
import type { ResultDocument } from '../../../server/model/document.js';

type TopologyDocument = Pick<ResultDocument, 'conditions' | 'elements' | 'warnings'>;
import { controlledDiscover, fakeAnalysis, outcome, until } from '../../helpers/fakes.js';
import { FAKE_LIBRARY, ScenarioFile, assertNativeBuilt, type ScenarioJson } from '../nvml/fake-nvml.js';

const H100 = 'GPU-1c3e5a7b-9d2f-4b6a-8c1e-3f5a7b9d2e40';
const WAIT_MS = 20_000;

let daemon: Daemon | null = null;
let scenario: ScenarioFile | null = null;
const dirs: string[] = [];

beforeAll(assertNativeBuilt);
afterEach(async () => {
  await daemon?.close();
  daemon = null;
  scenario?.remove();
  scenario = null;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function idle(s: ScenarioJson): void {
  for (const device of s.devices as ScenarioJson[]) {
    delete device.processes;
    device.utilization = { gpuPercent: 0, memoryPercent: 0 };
  }
}

async function boot(env: Record<string, string> = {}, edit?: (s: ScenarioJson) => void) {
  scenario = new ScenarioFile('h100-80gb-tenant.json');
  if (edit) scenario.edit(edit);
  const dir = mkdtempSync(path.join(tmpdir(), 'topod-busy-'));
  dirs.push(dir);
  const config = loadConfig({
    TOPOD_BACKEND: 'sim',
    TOPOD_DB: path.join(dir, 'topod.sqlite'),
    TOPOD_PORT: '0',
    TOPOD_NVML_LIB: FAKE_LIBRARY,
    TOPOD_LOCK_DIR: dir,
    ...env,
  });
  const discover = controlledDiscover();
  daemon = await createDaemon(config, {
    logger: pino({ level: 'silent' }),
    discovery: { ...fakeAnalysis('busy-1'), discover },
    gpuWatch: { firstRetryMs: 50, maxRetryMs: 200, watchIntervalMs: 50, windowMs: 0 },
  });
  await daemon.start();
  return { daemon, discover };
}

const jobOf = (d: Daemon): ProbeJob | undefined => d.topology.listJobs({ gpu: H100 })[0];

/** The job's success as its events tell it: stored, then (a turn later) the topology rebuilt with it. */
async function untilSucceeded(d: Daemon): Promise<void> {
  await until(() => jobOf(d)?.state === 'succeeded', WAIT_MS);
  await d.whenIdle();
}

/** The served topology document, parsed; null while there is none. */
function served(d: Daemon): TopologyDocument | null {
  const lookup = d.topology.getTopology(H100);
  return lookup.kind === 'ready' ? (JSON.parse(lookup.document.body) as TopologyDocument) : null;
}

describe('probing a GPU other processes use', () => {
  it('waits while another process uses the GPU, shows why, and probes once it is idle', async () => {
    const { daemon: d, discover } = await boot();
    await until(() => jobOf(d)?.state === 'waiting', WAIT_MS);
    expect(jobOf(d)).toMatchObject({
      state: 'waiting',
      phase: expect.stringMatching(/^gpu-busy: 1 compute process \(2\.3 GiB\), 100 % utilization/),
      waitingSince: expect.any(String),
    });
    expect(d.topology.getGpu(H100)?.probe.status).toBe('waiting');
    expect(d.topology.getTopology(H100)).toMatchObject({ kind: 'pending' });
    expect(discover.calls).toHaveLength(0);

    scenario?.edit(idle);
    await until(() => discover.calls.length === 1, WAIT_MS);
    discover.calls[0]?.resolve(outcome(4096));
    await untilSucceeded(d);
    const document = served(d);
    expect(document?.conditions).toMatchObject({
      source: 'nvml',
      busyAtStart: false,
      probedWhileBusy: false,
      otherProcesses: [],
      persistenceMode: expect.any(Boolean),
    });
    expect(document?.elements.l1?.size).toMatchObject({ value: 4096, confidence: 0.9 });
  }, 60_000);

  it('drops a probe another process starts using the GPU during, and measures again once it is idle', async () => {
    const { daemon: d, discover } = await boot({}, idle);
    await until(() => discover.calls.length === 1, WAIT_MS);
    scenario?.edit((s) => {
      (s.devices as ScenarioJson[])[0]!.processes = [{ pid: 777, usedMemoryBytes: 1 << 30, type: 'compute' }];
    });
    await until(() => jobOf(d)?.state === 'waiting', WAIT_MS);
    expect(jobOf(d)?.phase).toMatch(/^interfered: gpu-busy: 1 compute process/);
    expect(discover.calls[0]?.signal?.aborted).toBe(true);

    scenario?.edit(idle);
    await until(() => discover.calls.length === 2, WAIT_MS);
    discover.calls[1]?.resolve(outcome(2048));
    await untilSucceeded(d);
    expect(served(d)?.elements.l1?.size?.value).toBe(2048);
  }, 60_000);

  it('drops a probe whose measurements themselves showed another tenant, and measures again', async () => {
    const { daemon: d, discover } = await boot({}, idle);
    await until(() => discover.calls.length === 1, WAIT_MS);
    discover.calls[0]?.resolve({
      ...outcome(4096),
      interference: 'l1: 3 of 9000 timed loads took over 50000 cycles, and 2 of 9000 when measured again',
    });
    await until(() => jobOf(d)?.state === 'waiting', WAIT_MS);
    expect(jobOf(d)?.phase).toBe(
      'interfered: seen in the measurements: l1: 3 of 9000 timed loads took over 50000 cycles, and 2 of 9000 when measured again',
    );
    expect(served(d)).toBeNull();

    await until(() => discover.calls.length === 2, WAIT_MS);
    discover.calls[1]?.resolve(outcome(2048));
    await untilSucceeded(d);
    expect(served(d)?.elements.l1?.size?.value).toBe(2048);
  }, 60_000);

  it('keeps a result whose measurements showed a tenant when told to measure a busy GPU', async () => {
    const { daemon: d, discover } = await boot({ TOPOD_PROBE_WHEN: 'always' }, idle);
    await until(() => discover.calls.length === 1, WAIT_MS);
    discover.calls[0]?.resolve({ ...outcome(4096), interference: 'l1: 3 of 9000 timed loads took over 50000 cycles' });
    await untilSucceeded(d);
    expect(served(d)?.elements.l1?.size?.value).toBe(4096);
  }, 60_000);

  it('measures a busy GPU when told to, and the result says so with low confidence', async () => {
    const { daemon: d, discover } = await boot({ TOPOD_PROBE_WHEN: 'always' });
    await until(() => discover.calls.length === 1, WAIT_MS);
    discover.calls[0]?.resolve(outcome(4096));
    await untilSucceeded(d);
    const document = served(d);
    expect(document?.conditions).toMatchObject({
      busyAtStart: true,
      probedWhileBusy: true,
      busyReason: expect.stringMatching(/^gpu-busy: 1 compute process/),
      otherProcesses: [{ pid: 48213, kind: 'compute', usedMemoryBytes: 2415919104, migDeviceUuid: null }],
      clocksEventReasons: ['sw-power-cap'],
      temperatureC: { start: 61, end: 61 },
    });
    expect(document?.elements.l1?.size?.confidence).toBeLessThanOrEqual(0.5);
    expect(document?.warnings).toContainEqual(expect.stringMatching(/^measured while other processes used the GPU/));
  }, 60_000);

  it('fails the job with TOPOD_ERR_GPU_BUSY when the GPU stays busy past the longest wait', async () => {
    const { daemon: d, discover } = await boot({ TOPOD_PROBE_MAX_WAIT_MS: '1000' });
    await until(() => jobOf(d)?.state === 'failed', WAIT_MS);
    expect(jobOf(d)?.error).toMatchObject({ code: 'TOPOD_ERR_GPU_BUSY', message: expect.stringMatching(/gpu-busy: 1 compute process/) });
    expect(discover.calls).toHaveLength(0);
    expect(d.topology.getGpu(H100)?.probe.status).toBe('failed');
  }, 60_000);
});
