/**
 * Start-up as a new user meets it: a damaged database, a bad row, a second
 * daemon on the same database or port, a folder in the way, a bad setting.
 * Each either starts (the damage set aside and said in one log line) or
 * stops with one line on stderr naming the path and the fix, exit status 2 —
 * never a stack trace, never a restart loop.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DAEMON_TEST_SIM_MODEL, startDaemon, type DaemonProcess } from '../../helpers/daemon-process.js';
import { daemonCommand } from '../../helpers/entry-points.js';
import { eventually, getJson } from '../../helpers/http.js';
import { copyProbedDatabase, DAEMON_PROBE_WAIT_MS } from '../../helpers/probed-database.js';
import { useTempDir } from '../../helpers/temp-dir.js';
import { SIM_PROBED } from './probed.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const running: DaemonProcess[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const d of running.splice(0)) await d.stop('SIGKILL');
  for (const s of servers.splice(0)) s.close();
});

const BASE_ENV = {
  TOPOD_BACKEND: 'sim',
  TOPOD_SIM_MODEL: DAEMON_TEST_SIM_MODEL,
  TOPOD_NVML_LIB: '/nonexistent/libnvidia-ml.so.1',
  TOPOD_LOCK_DIR: '',
};

async function start(env: Record<string, string>): Promise<DaemonProcess> {
  const daemon = await startDaemon({ ...BASE_ENV, ...env });
  running.push(daemon);
  return daemon;
}

/** Runs the daemon to its exit: status, stderr lines, stdout (log) lines. */
function runToExit(
  env: Record<string, string>,
  args: string[] = ['--port', '0'],
  timeoutMs = 60_000,
): Promise<{ code: number | null; stderr: string[]; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...daemonCommand(), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...BASE_ENV, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`still running after ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr: stderr.split('\n').filter((l) => l.trim() !== ''), stdout });
    });
  });
}

const topologyReady = (base: string) =>
  eventually(
    () => getJson(`${base}/v1/gpus/0/topology`),
    (r) => r.status === 200,
    DAEMON_PROBE_WAIT_MS,
    100,
  );

describe('start-up', () => {
  const tempDir = useTempDir();

  it(
    'a file that is not a database is moved aside; the daemon starts fresh and probes',
    async () => {
      const dir = tempDir();
      const db = path.join(dir, 'topod.sqlite');
      writeFileSync(db, Buffer.alloc(16 * 1024, 0x5a));
      const daemon = await start({ TOPOD_DB: db });
      const damaged = daemon.logs.find((l) => l.code === 'TOPOD_ERR_STORE_DAMAGED');
      expect(damaged?.msg).toMatch(
        /^database .* was damaged \(file is not a database\): .*moved to .*topod\.sqlite\.damaged-\d{4}-\d\d-\d\dT\d{6}Z; fresh database/,
      );
      expect(readdirSync(dir).filter((f) => /\.damaged-[0-9TZ-]+$/.test(f))).toHaveLength(1);
      await topologyReady(daemon.baseUrl);
      const ready = await getJson(`${daemon.baseUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(ready.body.checks.store.detail).toMatch(/at boot: .*moved to/);
    },
    DAEMON_PROBE_WAIT_MS + 60_000,
  );

  it(
    'an unreadable stored result is skipped and kept, and the GPU is probed again',
    async () => {
      const dir = tempDir();
      const db = path.join(dir, 'topod.sqlite');
      await copyProbedDatabase(SIM_PROBED, db);
      const sqlite = new Database(db);
      sqlite.prepare(`UPDATE probe_results SET document = '{"truncated'`).run();
      sqlite.close();

      const second = await start({ TOPOD_DB: db });
      const quarantined = await second.waitForLog(
        (l) => typeof l.msg === 'string' && /cannot be read .* kept in the database for inspection/.test(l.msg),
      );
      expect(quarantined).toMatchObject({ level: 50, reason: expect.stringMatching(/document is not JSON/) });
      await topologyReady(second.baseUrl);
      const jobs = await getJson(`${second.baseUrl}/v1/jobs`);
      expect(jobs.body.jobs[0]).toMatchObject({ reason: 'first-probe', state: 'succeeded' });
      await second.stop('SIGTERM');
      running.splice(running.indexOf(second), 1);
      const check = new Database(db, { readonly: true });
      expect(check.prepare('SELECT COUNT(*) AS n FROM probe_results WHERE quarantined IS NOT NULL').get()).toEqual({ n: 1 });
      check.close();
    },
    DAEMON_PROBE_WAIT_MS + 60_000,
  );

  it("a second daemon on the same database is refused, naming the first one's pid", async () => {
    const db = path.join(tempDir(), 'topod.sqlite');
    const first = await start({ TOPOD_DB: db });
    const second = await runToExit({ TOPOD_DB: db });
    expect(second.code).toBe(2);
    expect(second.stderr).toHaveLength(1);
    expect(second.stderr[0]).toMatch(
      new RegExp(
        `^topod: cannot start: \\[TOPOD_ERR_STORE_LOCKED\\] the database .*topod\\.sqlite is in use by another topod, pid ${first.child.pid} on `,
      ),
    );
    // The first is untouched: it still answers and its job was not failed by the second.
    expect((await getJson(`${first.baseUrl}/healthz`)).status).toBe(200);
    const jobs = await getJson(`${first.baseUrl}/v1/jobs`);
    expect(jobs.body.jobs.filter((j: any) => j.error?.code === 'TOPOD_ERR_PROBE_INTERRUPTED')).toEqual([]);
  });

  it('after the first is killed with -9, the lock is free again (the kernel released it)', async () => {
    const db = path.join(tempDir(), 'topod.sqlite');
    const first = await start({ TOPOD_DB: db });
    await first.stop('SIGKILL');
    running.splice(running.indexOf(first), 1);
    const second = await start({ TOPOD_DB: db });
    expect((await getJson(`${second.baseUrl}/healthz`)).status).toBe(200);
  });

  it('a port in use stops the daemon before any probe, in one line', async () => {
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const db = path.join(tempDir(), 'topod.sqlite');
    const run = await runToExit({ TOPOD_DB: db, TOPOD_LOG_LEVEL: 'info' }, ['--port', String(port)]);
    expect(run.code).toBe(2);
    expect(run.stderr).toEqual([
      `topod: cannot start: [TOPOD_ERR_LISTEN] cannot listen on 127.0.0.1:${port} (EADDRINUSE): another process (another topod?) listens there: stop it, or set TOPOD_PORT (--port)`,
    ]);
    expect(run.stdout).not.toMatch(/probe job (queued|started)/);
    const sqlite = new Database(db, { readonly: true });
    expect(sqlite.prepare('SELECT COUNT(*) AS n FROM probe_jobs').get()).toEqual({ n: 0 });
    sqlite.close();
  });

  it.each([
    [
      'a file where the database folder should be',
      (dir: string) => (writeFileSync(path.join(dir, 'data'), 'x'), { TOPOD_DB: path.join(dir, 'data', 'topod.sqlite') }),
      /^topod: cannot start: \[TOPOD_ERR_STORE_OPEN\] cannot create the database folder .*data \((EEXIST|ENOTDIR)\): a file is in the way/,
    ],
    [
      'a folder at the database path',
      (dir: string) => (mkdirSync(path.join(dir, 'db')), { TOPOD_DB: path.join(dir, 'db') }),
      /^topod: cannot start: \[TOPOD_ERR_STORE_OPEN\] the database path .*db is a folder/,
    ],
    [
      'an unknown simulated model',
      (dir: string) => ({ TOPOD_DB: path.join(dir, 't.sqlite'), TOPOD_SIM_MODEL: 'rtx-9090' }),
      /^topod: cannot start: \[TOPOD_ERR_SIM_CONFIG\] .*rtx-9090/,
    ],
    [
      'an empty admin token',
      (dir: string) => ({ TOPOD_DB: path.join(dir, 't.sqlite'), TOPOD_ADMIN_TOKEN: '' }),
      /^topod: invalid configuration: TOPOD_ADMIN_TOKEN is set but empty/,
    ],
    [
      'a non-loopback address without a token',
      (dir: string) => ({ TOPOD_DB: path.join(dir, 't.sqlite'), TOPOD_HOST: '0.0.0.0' }),
      /^topod: invalid configuration: TOPOD_HOST 0\.0\.0\.0 is reachable from other hosts but no admin token is set/,
    ],
  ])('%s: one line naming it and the fix, exit 2', async (_name, setup, line) => {
    const dir = tempDir();
    const run = await runToExit(setup(dir));
    expect(run.code).toBe(2);
    expect(run.stderr, run.stderr.join('\n')).toHaveLength(1);
    expect(run.stderr[0]).toMatch(line);
    expect(run.stderr[0]).not.toMatch(/\n| {4}at /);
  });

  it('--insecure allows a non-loopback address without a token and says so at start', async () => {
    const daemon = await start({ TOPOD_DB: path.join(tempDir(), 't.sqlite'), TOPOD_HOST: '0.0.0.0', TOPOD_INSECURE: '1' });
    expect(daemon.logs.find((l) => l.level === 40 && /--insecure/.test(String(l.msg)))).toBeDefined();
    expect(daemon.logs.find((l) => l.msg === 'topod starting (token: none)')).toMatchObject({ token: 'none' });
  });

  it('logs whether a token is set, never the token', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'token'), 'file-secret-123\n');
    const daemon = await start({ TOPOD_DB: path.join(dir, 't.sqlite'), TOPOD_ADMIN_TOKEN_FILE: path.join(dir, 'token') });
    expect(daemon.logs.find((l) => l.msg === 'topod starting (token: set)')).toBeDefined();
    expect(JSON.stringify(daemon.logs)).not.toContain('file-secret-123');
    const probe = await fetch(`${daemon.baseUrl}/v1/gpus/0/probe`, {
      method: 'POST',
      headers: { authorization: 'Bearer file-secret-123' },
    });
    expect([202, 409]).toContain(probe.status);
    expect(existsSync(path.join(dir, 't.sqlite.lock'))).toBe(true);
  });
});
