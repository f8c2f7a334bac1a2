/**
 * The daemon as a new user runs it: a real process on the simulated GPU,
 * restarted, killed with SIGKILL mid-probe, and started without any GPU.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonProcess } from '../../helpers/daemon-process.js';
import { copyProbedDatabase, DAEMON_PROBE_WAIT_MS } from '../../helpers/probed-database.js';
import { useTempDir } from '../../helpers/temp-dir.js';
import { HAVE_PER_THREAD_NICE, threadNiceValues, threadStats, waitForThreadsAtNice } from '../../helpers/thread-nice.js';
import { SIM_PROBED } from './probed.js';

const running: DaemonProcess[] = [];
afterEach(async () => {
  for (const d of running.splice(0)) await d.stop('SIGKILL');
});

async function start(env: Record<string, string>): Promise<DaemonProcess> {
  const daemon = await startDaemon(env);
  running.push(daemon);
  return daemon;
}

const getJson = async (url: string) => {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, any> };
};

async function waitForTopology(baseUrl: string): Promise<Record<string, any>> {
  for (const deadline = Date.now() + DAEMON_PROBE_WAIT_MS; Date.now() < deadline; ) {
    const r = await getJson(`${baseUrl}/v1/gpus/0/topology`);
    if (r.status === 200) return r.body;
    expect(r.status).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`topology not ready within ${DAEMON_PROBE_WAIT_MS} ms`);
}

describe('daemon on the simulated GPU', () => {
  const tempDir = useTempDir();

  it(
    'probes at first start, then serves from the cache after a restart',
    async () => {
      const db = path.join(tempDir(), 'topod.sqlite');
      const first = await start({ TOPOD_BACKEND: 'sim', TOPOD_DB: db, TOPOD_NVML_LIB: '/nonexistent/libnvidia-ml.so.1' });
      const list = await getJson(`${first.baseUrl}/v1/gpus`);
      expect(list.status).toBe(200);
      expect(list.body.gpus).toHaveLength(1);
      expect(list.body.gpus[0]).toMatchObject({ index: 0, simulated: true, vendor: 'nvidia' });

      const pending = await getJson(`${first.baseUrl}/v1/gpus/0/topology`);
      if (pending.status === 503) {
        expect(pending.headers.get('content-type')).toContain('application/problem+json');
        expect(pending.headers.get('retry-after')).toMatch(/^\d+$/);
      }
      const topology = await waitForTopology(first.baseUrl);
      expect(topology.simulated).toBe(true);
      // NVML absent: healthy, static data served, and the document says why there is no live state.
      expect(topology.dynamic.available).toBe(false);
      expect(topology.dynamic.reason).toMatch(/libnvidia-ml|NVML/i);
      expect((await fetch(`${first.baseUrl}/readyz`)).status).toBe(200);
      expect(topology.elements.l1.size).toMatchObject({ unit: 'bytes', source: 'microbenchmark' });
      expect(topology.elements.l1.latency.mean).toBeGreaterThan(0);
      expect(topology.elements.l2.latency.mean).toBeGreaterThan(topology.elements.l1.latency.mean);
      // SIGTERM: graceful close, exit 0, and the shutdown is logged.
      expect(await first.stop('SIGTERM')).toBe(0);
      expect(first.logs.some((l) => l.msg === 'stopped')).toBe(true);

      const second = await start({ TOPOD_BACKEND: 'sim', TOPOD_DB: db });
      const cached = await getJson(`${second.baseUrl}/v1/gpus/0/topology`);
      expect(cached.status).toBe(200);
      expect(cached.body.probe.resultId).toBe(topology.probe.resultId);
      const jobs = await getJson(`${second.baseUrl}/v1/jobs`);
      expect(jobs.body.jobs).toHaveLength(1);
      expect(second.logs.some((l) => l.msg === 'probe job queued')).toBe(false);
    },
    DAEMON_PROBE_WAIT_MS + 60_000,
  );

  it.skipIf(!HAVE_PER_THREAD_NICE)(
    'runs its probe and checkpoint threads below the event loop (TOPOD_WORKER_NICE), and the loop itself as started',
    async () => {
      const db = path.join(tempDir(), 'topod.sqlite');
      await copyProbedDatabase(SIM_PROBED, db);
      const daemon = await start({ TOPOD_BACKEND: 'sim', TOPOD_DB: db, TOPOD_WORKER_NICE: '7' });
      const pid = daemon.child.pid!;
      const base = threadNiceValues(pid).get(pid)!;
      expect(base).toBe(threadNiceValues().get(process.pid));
      // The probe worker and the WAL checkpointer both start with the daemon.
      expect(await waitForThreadsAtNice(pid, base + 7, 2)).toHaveLength(2);
      expect(threadNiceValues(pid).get(pid)).toBe(base);
      // libuv's pool (file I/O, DNS, zlib for the event loop) is not lowered with them.
      const pool = [...threadStats(pid).values()].filter((thread) => thread.name === 'libuv-worker');
      expect(pool.every((thread) => thread.nice === base)).toBe(true);
      expect((await getJson(`${daemon.baseUrl}/v1/gpus/0/topology`)).status).toBe(200);
    },
    DAEMON_PROBE_WAIT_MS,
  );

  it(
    'after kill -9 during a probe, the next boot marks the job failed and serves the previous result',
    async () => {
      const db = path.join(tempDir(), 'topod.sqlite');
      await copyProbedDatabase(SIM_PROBED, db);
      const first = await start({ TOPOD_BACKEND: 'sim', TOPOD_DB: db });
      const original = await waitForTopology(first.baseUrl);
      const posted = await fetch(`${first.baseUrl}/v1/gpus/0/probe`, { method: 'POST' });
      expect(posted.status).toBe(202);
      const jobUrl = posted.headers.get('location') as string;
      await first.waitForLog((l) => l.msg === 'probe job started' && typeof l.jobId === 'string' && jobUrl.endsWith(l.jobId));
      await first.stop('SIGKILL');

      const second = await start({ TOPOD_BACKEND: 'sim', TOPOD_DB: db });
      const job = await getJson(`${second.baseUrl}${jobUrl}`);
      expect(job.body).toMatchObject({ state: 'failed', error: { code: 'TOPOD_ERR_PROBE_INTERRUPTED' } });
      const served = await getJson(`${second.baseUrl}/v1/gpus/0/topology`);
      expect(served.status).toBe(200);
      expect(served.body.probe.resultId).toBe(original.probe.resultId);
      await second.stop();

      const check = new Database(db, { readonly: true });
      expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
      check.close();
    },
    DAEMON_PROBE_WAIT_MS + 60_000,
  );

  it('without a GPU and without TOPOD_BACKEND it starts, serves an empty list and logs why', async () => {
    const daemon = await start({
      TOPOD_DB: ':memory:',
      TOPOD_NVML_LIB: '/nonexistent/libnvidia-ml.so.1',
      TOPOD_PROBE_PATH: '/nonexistent/topod-probe',
    });
    const list = await getJson(`${daemon.baseUrl}/v1/gpus`);
    expect(list.body.gpus).toEqual([]);
    const why = await daemon.waitForLog((l) => l.msg === 'no GPUs found: serving an empty list');
    expect(String(why.backend)).toMatch(/no GPU measurement backend/);
    expect((await fetch(`${daemon.baseUrl}/healthz`)).status).toBe(200);
  });

  it('without a backend it also says so in one human line: nothing is measured, and how to try the simulator', async () => {
    const daemon = await start({
      TOPOD_DB: ':memory:',
      TOPOD_NVML_LIB: '/nonexistent/libnvidia-ml.so.1',
      TOPOD_PROBE_PATH: '/nonexistent/topod-probe',
    });
    // Printed right after the 'topod listening' log line; the JSON log keeps its own warning.
    for (let i = 0; i < 100 && daemon.stderr.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(daemon.stderr).toEqual([
      'topod: nothing is measured here (no GPU measurement backend: no probe binary at /nonexistent/topod-probe (build it with npm run build:probe on a machine with nvcc or hipcc)); ' +
        'GPUs are listed but never probed. To try topod on a simulated H100: TOPOD_BACKEND=sim npm start',
    ]);
    expect(daemon.logs.find((l) => l.msg === 'no measurement backend: GPUs are listed but not probed')).toMatchObject({
      level: 40,
      reason: expect.stringMatching(/no probe binary/),
    });
    // Not a line every daemon prints: with the simulator nothing is said besides the log.
    const sim = await start({ TOPOD_BACKEND: 'sim', TOPOD_DB: ':memory:' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sim.stderr).toEqual([]);
  });

  it('refuses a bad configuration with a clear message and exit code 2', async () => {
    await expect(startDaemon({ TOPOD_BACKEND: 'gpu' })).rejects.toThrow(/TOPOD_BACKEND must be one of auto \| native \| sim, got "gpu"/);
  });
});
