/**
 * kill -9 at every phase of a probe: queued before the probe process is
 * spawned, mid-measurement, and inside the result transaction. After each,
 * the restarted daemon serves the previous result, the job is marked
 * interrupted, and `PRAGMA integrity_check` is ok. (The probe process killed
 * by a signal, hung past its deadline or printing garbage is tested in
 * test/integration/probe/.)
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonProcess } from '../../helpers/daemon-process.js';
import { eventually, getJson } from '../../helpers/http.js';
import { copyProbedDatabase, DAEMON_PROBE_WAIT_MS } from '../../helpers/probed-database.js';
import { useTempDir } from '../../helpers/temp-dir.js';
import { SIM_PROBED } from './probed.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const running: DaemonProcess[] = [];
afterEach(async () => {
  for (const d of running.splice(0)) await d.stop('SIGKILL');
});

const ENV = { TOPOD_BACKEND: 'sim', TOPOD_NVML_LIB: '/nonexistent/libnvidia-ml.so.1' };

async function start(db: string): Promise<DaemonProcess> {
  const daemon = await startDaemon({ ...ENV, TOPOD_DB: db });
  running.push(daemon);
  return daemon;
}

async function kill(daemon: DaemonProcess): Promise<void> {
  await daemon.stop('SIGKILL');
  running.splice(running.indexOf(daemon), 1);
}

function integrity(db: string): string {
  const sqlite = new Database(db, { readonly: true });
  try {
    return sqlite.pragma('integrity_check', { simple: true }) as string;
  } finally {
    sqlite.close();
  }
}

const topology = (base: string) =>
  eventually(
    () => getJson(`${base}/v1/gpus/0/topology`),
    (r) => r.status === 200,
    DAEMON_PROBE_WAIT_MS,
    100,
  );

describe('kill -9 at every phase of a probe', () => {
  const tempDir = useTempDir();

  // Each starts from a database the simulated GPU was already probed into: the previous result to keep serving.
  it(
    'queued (before spawn) and mid-measurement: the previous result is served and the store is intact',
    async () => {
      const db = path.join(tempDir(), 'topod.sqlite');
      await copyProbedDatabase(SIM_PROBED, db);
      const first = await start(db);
      const served = (await topology(first.baseUrl)).body.probe.resultId as number;

      for (const phase of ['queued', 'measuring'] as const) {
        const daemon = running[0] ?? (await start(db));
        const res = await fetch(`${daemon.baseUrl}/v1/gpus/0/probe`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"force":true}',
        });
        expect(res.status).toBe(202);
        const job = (await res.json()) as { id: string };
        if (phase === 'measuring') {
          await eventually(
            () => getJson(`${daemon.baseUrl}/v1/jobs/${job.id}`),
            (r) => r.body.state === 'running' && r.body.progress > 0,
            DAEMON_PROBE_WAIT_MS,
            20,
          );
        }
        await kill(daemon);
        expect(integrity(db), phase).toBe('ok');

        const next = await start(db);
        const after = await topology(next.baseUrl);
        expect(after.body.probe.resultId, phase).toBe(served);
        const interrupted = await getJson(`${next.baseUrl}/v1/jobs/${job.id}`);
        expect(interrupted.body, phase).toMatchObject({ state: 'failed', error: { code: 'TOPOD_ERR_PROBE_INTERRUPTED' } });
      }
    },
    DAEMON_PROBE_WAIT_MS + 120_000,
  );

  it(
    'inside the result transaction: nothing half-written is visible, the previous result is served',
    async () => {
      const db = path.join(tempDir(), 'topod.sqlite');
      await copyProbedDatabase(SIM_PROBED, db);
      const first = await start(db);
      const before = await topology(first.baseUrl);
      const uuid = before.body.gpu.uuid as string;
      await first.stop('SIGTERM');
      running.splice(0);

      const writer = spawn(
        process.execPath,
        ['--import', 'tsx', path.join(ROOT, 'test/integration/daemon/fixtures/tx-writer.ts'), db, uuid],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      writer.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      await new Promise<void>((resolve, reject) => {
        writer.stdout.on('data', (c: Buffer) => c.toString().includes('in-transaction') && resolve());
        writer.on('exit', (code) => reject(new Error(`writer exited (${code}) before its transaction: ${stderr}`)));
      });
      writer.kill('SIGKILL');
      await new Promise((r) => writer.once('close', r));
      expect(integrity(db)).toBe('ok');

      const second = await start(db);
      const after = await topology(second.baseUrl);
      expect(after.body.probe.resultId).toBe(before.body.probe.resultId);
      expect(JSON.stringify(after.body)).not.toContain('uncommitted');
      const sqlite = new Database(db, { readonly: true });
      expect(sqlite.prepare("SELECT COUNT(*) AS n FROM raw_series WHERE name LIKE 'l1.size.kill%'").get()).toEqual({ n: 0 });
      sqlite.close();
    },
    DAEMON_PROBE_WAIT_MS + 60_000,
  );
});
