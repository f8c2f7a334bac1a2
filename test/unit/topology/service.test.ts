import { describe, expect, it, vi } from 'vitest';
import type { GpuIdentity } from '../../../server/model/gpu.js';
import { ProbeScheduler } from '../../../server/jobs/scheduler.js';
import { openDatabase } from '../../../server/store/database.js';
import { GpuStore } from '../../../server/store/gpus.js';
import { JobStore } from '../../../server/store/jobs.js';
import { ResultStore } from '../../../server/store/results.js';
import type { TopodEvent } from '../../../server/model/topology-api.js';
import { ProbePolicy } from '../../../server/topology/probe-policy.js';
import { TopologyService } from '../../../server/topology/service.js';
import {
  controlledDiscover,
  fakeAnalysis,
  fakeLifecycle,
  gpuIdentity,
  inertBackend,
  outcome,
  silentLogger,
  until,
} from '../../helpers/fakes.js';
import { DOCUMENT_SCHEMA_VERSION } from '../../../server/model/document.js';

interface SetupOptions {
  probeVersion?: string;
  db?: ReturnType<typeof openDatabase>;
  withBackend?: boolean;
  analysis?: ReturnType<typeof fakeAnalysis>;
  store?: { check(): { ok: boolean; detail: string } };
}

function setup(options: SetupOptions = {}) {
  const db = options.db ?? openDatabase(':memory:');
  const jobs = new JobStore(db);
  const results = new ResultStore(db);
  const discover = controlledDiscover();
  const backend = inertBackend(options.probeVersion ?? 'p1');
  const analysis = options.analysis ?? fakeAnalysis('a1');
  const withBackend = options.withBackend !== false;
  const lifecycle = withBackend ? fakeLifecycle({ db, results, jobs }, analysis) : null;
  const scheduler = lifecycle ? new ProbeScheduler({ jobs, backend, discover, lifecycle, concurrency: 1, logger: silentLogger }) : null;
  const policy = new ProbePolicy({
    results,
    probeVersion: withBackend ? backend.probeVersion : null,
    isOutdated: lifecycle ? (r) => lifecycle.isOutdated(r) : null,
  });
  const store = options.store ?? { check: () => ({ ok: true, detail: 'fake store' }) };
  const service = new TopologyService({
    jobs,
    scheduler,
    policy,
    lifecycle,
    store,
    noBackendReason: scheduler ? null : 'no GPU here',
    logger: silentLogger,
  });
  const events: TopodEvent[] = [];
  service.subscribe((e) => events.push(e));
  const sync = (gpus: GpuIdentity[], by = 'boot') => {
    for (const g of gpus) new GpuStore(db).seen(g);
    service.syncGpus(gpus, by);
  };
  return { db, jobs, results, discover, scheduler, service, events, sync, analysis, lifecycle };
}

async function probeOnce(s: ReturnType<typeof setup>, l1 = 1000, more: Parameters<typeof outcome>[1] = {}): Promise<void> {
  await until(() => s.discover.calls.length > 0);
  s.discover.calls.shift()?.resolve(outcome(l1, more));
  await s.scheduler?.whenIdle();
}

describe('TopologyService', () => {
  it('probes a new GPU once, answers pending meanwhile, then serves the document with an ETag', async () => {
    const s = setup();
    s.sync([gpuIdentity()]);
    const pending = s.service.getTopology('0');
    expect(pending.kind).toBe('pending');
    await probeOnce(s, 4242);
    const ready = s.service.getTopology(gpuIdentity().uuid);
    expect(ready.kind).toBe('ready');
    if (ready.kind !== 'ready') return;
    const doc = JSON.parse(ready.document.body);
    expect(doc.elements.l1.size.value).toBe(4242);
    expect(doc.status).toMatchObject({ probeStatus: 'probed', stale: false });
    expect(ready.document.etag).toMatch(/^"[\w-]+"$/);
    expect(s.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['probe.queued', 'probe.started', 'probe.succeeded', 'topology.changed']),
    );
    // The same document object is handed out again: serialised once per change.
    const again = s.service.getTopology('0');
    expect(again.kind === 'ready' && again.document).toBe(ready.document);
  });

  it('serves from the cache after a restart without probing again', async () => {
    const first = setup();
    first.sync([gpuIdentity()]);
    await probeOnce(first);
    const second = setup({ db: first.db });
    second.sync([gpuIdentity()]);
    expect(second.service.getTopology('0').kind).toBe('ready');
    expect(second.jobs.list({}).filter((j) => j.state === 'queued')).toHaveLength(0);
    expect(second.discover.calls).toHaveLength(0);
  });

  it('a new driver version serves the old result as stale and queues a re-probe; history keeps both', async () => {
    const s = setup();
    s.sync([gpuIdentity()]);
    await probeOnce(s, 1);
    s.sync([gpuIdentity({ driverVersion: '590.1' })], 'nvml');
    const stale = s.service.getTopology('0');
    expect(stale.kind).toBe('ready');
    if (stale.kind === 'ready')
      expect(JSON.parse(stale.document.body).status).toMatchObject({ stale: true, staleReason: 'driver changed from 580.00.01 to 590.1' });
    const job = s.jobs.activeFor(gpuIdentity().uuid);
    expect(job?.reason).toBe('driver-changed');
    await probeOnce(s, 2);
    const fresh = s.service.getTopology('0');
    if (fresh.kind === 'ready') expect(JSON.parse(fresh.document.body).status.stale).toBe(false);
    expect(s.results.history(gpuIdentity().uuid).map((h) => h.driverVersion)).toEqual(['590.1', '580.00.01']);
  });

  it('a new probe version triggers a new probe', async () => {
    const first = setup({ probeVersion: 'p1' });
    first.sync([gpuIdentity()]);
    await probeOnce(first);
    const second = setup({ db: first.db, probeVersion: 'p2' });
    second.sync([gpuIdentity()]);
    expect(second.jobs.activeFor(gpuIdentity().uuid)?.reason).toBe('probe-version-changed');
  });

  it('a failed re-probe keeps the previous result served', async () => {
    const s = setup();
    s.sync([gpuIdentity()]);
    await probeOnce(s, 7);
    const outcomeOfRequest = s.service.requestProbe('0', { only: null, force: false, requestedBy: 'test' });
    expect(outcomeOfRequest.kind).toBe('queued');
    await until(() => s.discover.calls.length > 0);
    s.discover.calls.shift()?.reject(new Error('GPU fell off the bus'));
    await s.scheduler?.whenIdle();
    const served = s.service.getTopology('0');
    expect(served.kind === 'ready' && JSON.parse(served.document.body).elements.l1.size.value).toBe(7);
    expect(s.service.getGpu('0')?.probe.status).toBe('probed');
  });

  it('reports conflicts, force supersedes, unknown GPUs and no-backend are distinguished', async () => {
    const s = setup();
    s.sync([gpuIdentity()]);
    await until(() => s.discover.calls.length === 1);
    const first = s.jobs.activeFor(gpuIdentity().uuid);
    expect(first?.state).toBe('running');
    const conflict = s.service.requestProbe('0', { only: null, force: false, requestedBy: 'test' });
    expect(conflict).toEqual({ kind: 'conflict', job: first });
    const forced = s.service.requestProbe('0', { only: ['l1'], force: true, requestedBy: 'test' });
    expect(forced.kind).toBe('queued');
    expect(s.jobs.get(first?.id as string)?.state).toBe('cancelled');
    expect(s.service.requestProbe('7', { only: null, force: false, requestedBy: 'test' })).toEqual({ kind: 'unknown' });
    await until(() => s.discover.calls.length === 2);
    expect(s.discover.calls[0]?.signal?.aborted).toBe(true);
    s.discover.calls[1]?.resolve(outcome());
    await s.scheduler?.whenIdle();
    if (forced.kind === 'queued') expect(s.jobs.get(forced.job.id)).toMatchObject({ state: 'succeeded', only: ['l1'], force: true });

    const none = setup({ withBackend: false });
    none.sync([gpuIdentity()]);
    expect(none.service.requestProbe('0', { only: null, force: false, requestedBy: 't' })).toEqual({
      kind: 'no-backend',
      reason: 'no GPU here',
    });
    expect(none.service.getTopology('0')).toEqual({ kind: 'unavailable', reason: 'no GPU here' });
  });

  it('resolves GPUs by index and UUID (any case) and emits removal and return', () => {
    const s = setup({ withBackend: false });
    const b = gpuIdentity({ uuid: 'GPU-BBBBBBBB-2222-3333-4444-555555555555', index: 1 });
    s.sync([gpuIdentity(), b]);
    expect(s.service.getGpu('1')?.uuid).toBe(b.uuid);
    expect(s.service.getGpu(b.uuid.toLowerCase())?.index).toBe(1);
    expect(s.service.getGpu('GPU-nope')).toBeNull();
    s.sync([gpuIdentity()], 'nvml');
    expect(s.service.getGpu(b.uuid)?.present).toBe(false);
    expect(s.service.getGpu('1')).toBeNull();
    s.sync([gpuIdentity(), b], 'nvml');
    expect(s.events.map((e) => `${e.type}:${e.gpuUuid.slice(4, 8)}`)).toEqual(['gpu.removed:BBBB', 'gpu.added:BBBB']);
  });

  it('re-analyses a result of an older analysis at boot from its stored raw series, without a probe', async () => {
    const first = setup({ analysis: fakeAnalysis('a1') });
    first.sync([gpuIdentity()]);
    await probeOnce(first, 1000, { l2: 4000 });
    const original = first.results.latestForGpu(gpuIdentity().uuid);

    const newer = fakeAnalysis('a2', 2);
    const second = setup({ db: first.db, analysis: newer });
    second.sync([gpuIdentity()]);
    await second.service.whenReanalysed();
    expect(second.discover.calls).toHaveLength(0);
    expect(second.jobs.list({}).filter((j) => j.state === 'queued' || j.state === 'running')).toHaveLength(0);
    const ready = second.service.getTopology('0');
    expect(ready.kind).toBe('ready');
    const doc = ready.kind === 'ready' ? JSON.parse(ready.document.body) : null;
    expect(doc.elements.l1.size.value).toBe(2000);
    expect(doc.elements.l2.size.value).toBe(8000);
    expect(doc.probe).toMatchObject({
      analysisVersion: 'a2',
      reanalysedFrom: { resultId: original?.id, analysisVersion: 'a1' },
      jobId: original?.document.probe.jobId,
    });
    const rebuilt = second.results.latestForGpu(gpuIdentity().uuid);
    expect(rebuilt?.reanalysedFrom).toBe(original?.id);
    expect(second.results.rawSeries(rebuilt?.id as number)).toEqual(second.results.rawSeries(original?.id as number));

    // Same analysis again: nothing to do.
    const third = setup({ db: first.db, analysis: fakeAnalysis('a2', 2) });
    third.sync([gpuIdentity()]);
    await third.service.whenReanalysed();
    expect(third.analysis.reanalysed).toBe(0);
    expect(third.results.history(gpuIdentity().uuid)).toHaveLength(2);
  });

  it('serves every GPU at once while an outdated result is re-analysed in the background, then the rebuilt one', async () => {
    const gpuB = gpuIdentity({ uuid: 'GPU-bbbbbbbb-2222-3333-4444-555555555555', index: 1 });
    const first = setup({ analysis: fakeAnalysis('a1') });
    first.sync([gpuIdentity(), gpuB]);
    for (const l1 of [1000, 3000]) {
      await until(() => first.discover.calls.length > 0);
      first.discover.calls.shift()?.resolve(outcome(l1));
    }
    await first.scheduler?.whenIdle();
    let releaseAnalysis: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (releaseAnalysis = resolve));
    const second = setup({ db: first.db, analysis: fakeAnalysis('a2', 2) });
    const lifecycle = second.lifecycle as NonNullable<typeof second.lifecycle>;
    const reanalyse = lifecycle.reanalyse.bind(lifecycle);
    vi.spyOn(lifecycle, 'reanalyse').mockImplementation(async (source) => {
      await held;
      return reanalyse(source);
    });
    second.sync([gpuIdentity(), gpuB]);
    // Both GPUs answer at once, with what is stored, while the re-analyses wait.
    const served = [gpuIdentity().uuid, gpuB.uuid].map((uuid) => second.service.getTopology(uuid));
    expect(
      served.map((lookup) => (lookup.kind === 'ready' ? JSON.parse(lookup.document.body).probe.analysisVersion : lookup.kind)),
    ).toEqual(['a1', 'a1']);
    releaseAnalysis();
    await second.service.whenReanalysed();
    const rebuilt = second.service.getTopology(gpuB.uuid);
    expect(rebuilt.kind === 'ready' && JSON.parse(rebuilt.document.body).probe.analysisVersion).toBe('a2');
  });

  it('rebuilds a document stored in schema version 1 even when its analysis is current', async () => {
    const first = setup({ analysis: fakeAnalysis('a1') });
    first.sync([gpuIdentity()]);
    await probeOnce(first, 1000);
    first.db.prepare("UPDATE probe_results SET document = json_set(document, '$.schemaVersion', 1)").run();
    const second = setup({ db: first.db, analysis: fakeAnalysis('a1') });
    second.sync([gpuIdentity()]);
    await second.service.whenReanalysed();
    const ready = second.service.getTopology('0');
    const doc = ready.kind === 'ready' ? JSON.parse(ready.document.body) : null;
    expect(doc).toMatchObject({
      schemaVersion: DOCUMENT_SCHEMA_VERSION,
      probe: { reanalysedFrom: { resultId: 1, analysisVersion: 'a1' } },
    });
    expect(second.discover.calls).toHaveLength(0);
  });

  it('re-analyses on request: a new result that says where it came from; unknown and unprobed GPUs are told apart', async () => {
    const s = setup({ analysis: fakeAnalysis('a1') });
    s.sync([gpuIdentity()]);
    expect(await s.service.reanalyse('0')).toMatchObject({ kind: 'no-result' });
    await probeOnce(s, 10);
    const before = s.service.getTopology('0');
    const outcomeOfRequest = await s.service.reanalyse(gpuIdentity().uuid);
    expect(outcomeOfRequest).toMatchObject({
      kind: 'reanalysed',
      gpuUuid: gpuIdentity().uuid,
      analysisVersion: 'a1',
      reanalysedFrom: { resultId: 1, analysisVersion: 'a1' },
    });
    const after = s.service.getTopology('0');
    expect(after.kind === 'ready' && JSON.parse(after.document.body).probe.reanalysedFrom).toEqual({ resultId: 1, analysisVersion: 'a1' });
    expect(before.kind === 'ready' && after.kind === 'ready' && before.document.etag !== after.document.etag).toBe(true);
    expect(await s.service.reanalyse('GPU-nope')).toEqual({ kind: 'unknown' });
    const none = setup({ withBackend: false, db: s.db });
    none.sync([gpuIdentity()]);
    expect(await none.service.reanalyse('0')).toMatchObject({ kind: 'no-backend' });
  });

  it('reads active jobs from the scheduler, not SQLite, when serving', async () => {
    const s = setup();
    s.sync([gpuIdentity()]);
    await probeOnce(s);
    const spy = vi.spyOn(s.jobs, 'activeFor');
    s.service.getTopology('0');
    s.service.listGpus();
    s.service.getGpu('0');
    s.service.applySnapshot({
      available: false,
      reason: 'test',
      driverVersion: null,
      cudaDriverVersion: null,
      devices: [],
      readAt: new Date().toISOString(),
    });
    expect(spy).not.toHaveBeenCalled();
  });

  it('health fails when the store fails and when NVML is lost after answering; never having NVML is fine', () => {
    let storeOk = true;
    const s = setup({ store: { check: () => ({ ok: storeOk, detail: storeOk ? 'writable' : 'deleted' }) } });
    const snapshot = (available: boolean) => ({
      available,
      reason: available ? null : 'init failed',
      driverVersion: available ? '580.1' : null,
      cudaDriverVersion: null,
      devices: [],
      readAt: new Date().toISOString(),
    });
    // Not ready until boot has listed the GPUs (none here).
    expect(s.service.health()).toMatchObject({
      ready: false,
      checks: { gpus: { ok: false, detail: expect.stringMatching(/not enumerated yet/) } },
    });
    s.service.syncGpus([], 'boot');
    s.service.applySnapshot(snapshot(false));
    expect(s.service.health()).toMatchObject({ ready: true, checks: { nvml: { ok: true } } });
    s.service.applySnapshot(snapshot(true));
    expect(s.service.health().ready).toBe(true);
    s.service.applySnapshot(snapshot(false));
    expect(s.service.health()).toMatchObject({ ready: false, checks: { nvml: { ok: false }, store: { ok: true } } });
    s.service.applySnapshot(snapshot(true));
    storeOk = false;
    expect(s.service.health()).toMatchObject({ ready: false, checks: { store: { ok: false, detail: 'deleted' } } });
  });
});
