/**
 * `topod` as a user runs it, against a real daemon on the simulated GPU:
 * without a terminal (JSON, and plain progress lines on stderr), under a
 * pseudo-terminal made by util-linux `script` (a table by default, a
 * cli-progress bar for --watch), and with no daemon to talk to.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { elementEntries, elementLabel } from '../../../server/faces/documents.js';
import { startDaemon, type DaemonProcess } from '../../helpers/daemon-process.js';
import { cliCommand } from '../../helpers/entry-points.js';
import { eventually, getJson } from '../../helpers/http.js';
import { useTempDir } from '../../helpers/temp-dir.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SCRIPT = spawnSync('script', ['--version']).status === 0;

/** A port nothing listens on: bound, then released. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node bin/topod …` (or from the sources through tsx: ../../helpers/entry-points.ts) without a terminal. */
function topod(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...cliCommand(), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The same under a pseudo-terminal: `script -qfec` runs it on a pty and exits with its status. */
function topodOnTty(args: string[]): Promise<Run> {
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const command = [process.execPath, ...cliCommand(), ...args].map(quote).join(' ');
  return new Promise((resolve) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TERM: 'xterm', COLUMNS: '120' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('topod CLI against a simulated daemon', () => {
  const tempDir = useTempDir();
  let daemon: DaemonProcess;
  let url: string;
  let document: Record<string, any>;

  beforeAll(async () => {
    daemon = await startDaemon({ TOPOD_BACKEND: 'sim', TOPOD_DB: path.join(tempDir(), 'topod.sqlite') });
    url = daemon.baseUrl;
    document = (
      await eventually(
        () => getJson(`${url}/v1/gpus/0/topology`),
        (r) => r.status === 200,
        120_000,
        250,
      )
    ).body;
  }, 150_000);
  afterAll(async () => daemon?.stop('SIGKILL'));

  it('without a terminal: JSON for gpus, topology and jobs; --url or TOPOD_URL', async () => {
    const gpus = await topod(['--url', url, 'gpus']);
    expect(gpus.code, gpus.stderr).toBe(0);
    expect(JSON.parse(gpus.stdout).gpus[0]).toMatchObject({ index: 0, simulated: true });
    const topology = await topod(['topology', '0'], { TOPOD_URL: url });
    expect(topology.code, topology.stderr).toBe(0);
    expect(JSON.parse(topology.stdout).elements).toEqual(document.elements);
    const jobs = await topod(['--url', url, 'jobs', '--limit', '5']);
    expect(JSON.parse(jobs.stdout).jobs.length).toBeGreaterThan(0);
  });

  it('topology -o table: one row per element the document has; the old --format table still works, deprecated', async () => {
    const run = await topod(['--url', url, 'topology', '0', '-o', 'table']);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[1]).toMatch(/^element\s+size\s+latency\s+line\s+fetch\s+bandwidth\s+confidence$/);
    for (const [name] of elementEntries(document as any)) expect(lines.some((line) => line.startsWith(elementLabel(name)))).toBe(true);
    const old = await topod(['--url', url, 'topology', '0', '--format', 'table']);
    expect(old.stdout).toBe(run.stdout);
    expect(old.stderr).toBe('topod: --format table is deprecated: use -o table\n');
  });

  it('-o yaml and --no-headers for scripts', async () => {
    const yaml = await topod(['--url', url, 'gpus', '-o', 'yaml']);
    expect(yaml.code, yaml.stderr).toBe(0);
    expect(parse(yaml.stdout)).toEqual(JSON.parse((await topod(['--url', url, 'gpus'])).stdout));
    const rows = await topod(['--url', url, 'gpus', '-o', 'table', '--no-headers']);
    expect(rows.stdout.split('\n')[0]).toMatch(new RegExp(`^0 +${document.gpu.uuid} `));
  });

  it('probe --watch in a pipe: plain progress lines on stderr, the job as it ended on stdout, exit 0 when it succeeds', async () => {
    const run = await topod(['--url', url, 'probe', '0', '--only', 'l1', '--force', '--watch']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ state: 'succeeded', only: ['l1'] });
    expect(run.stderr).not.toContain('\u001b[');
    expect(run.stderr).toMatch(/^running \d+% \S+/m);
    const table = await topod(['--url', url, 'probe', '0', '--only', 'l1', '--force', '--watch', '-o', 'table']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^job \S+ succeeded in [\d.]+ s\n$/);
  }, 120_000);

  it('fit -o json answers with the advice and the numbers it used', async () => {
    const run = await topod(['--url', url, 'fit', '0', '--working-set', '8MiB', '-o', 'json']);
    expect(run.code, run.stderr).toBe(0);
    const advice = JSON.parse(run.stdout);
    expect(advice).toMatchObject({ workingSetBytes: 8 * 1024 * 1024, gpuUuid: document.gpu.uuid });
    expect(advice.basis.l2SizeBytes).toBe(document.elements.l2.size.value);
  });

  it('bad input and problems: a clear line on stderr and a non-zero exit', async () => {
    const unknown = await topod(['--url', url, 'topology', '7']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^topod: topology of GPU 7: 404 Not Found \[TOPOD_ERR_NOT_FOUND\]: No GPU "7"/);
    const badSize = await topod(['--url', url, 'fit', '0', '--working-set', 'lots']);
    expect(badSize.code).toBe(1);
    expect(badSize.stderr).toMatch(/is not a size/);
    const badOnly = await topod(['--url', url, 'probe', '0', '--only', 'nosuch']);
    expect(badOnly.code).toBe(1);
    expect(badOnly.stderr).toMatch(/400 .*not an element a probe can measure/);
  });

  it.skipIf(!SCRIPT)(
    'on a terminal: a table by default, and probe --watch draws a progress bar to 100 %',
    async () => {
      const table = await topodOnTty(['--url', url, 'topology', '0']);
      expect(table.code, table.stdout).toBe(0);
      expect(table.stdout).toMatch(/element\s+size\s+latency/);
      const run = await topodOnTty(['--url', url, 'probe', '0', '--force', '--watch']);
      expect(run.code, run.stdout).toBe(0);
      expect(run.stdout).toMatch(/probe [█░]+ \d+% \| /);
      expect(run.stdout).toMatch(/probe █{30} 100% \| done/);
      expect(run.stdout).toMatch(/job \S+ succeeded/);
    },
    150_000,
  );

  it.skipIf(SCRIPT)('terminal tests skipped — util-linux `script` is not installed', () => {
    expect(SCRIPT).toBe(false);
  });
});

describe('topod serve', () => {
  const tempDir = useTempDir();

  it('runs the daemon with the flags given, and stops it on SIGTERM', async () => {
    const port = await closedPort();
    const child = spawn(
      process.execPath,
      [
        ...cliCommand(),
        'serve',
        '--backend',
        'sim',
        '--port',
        String(port),
        '--db',
        ':memory:',
        '--lock-dir',
        tempDir(),
        '--log-level',
        'warn',
      ],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, stdio: 'ignore' },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const gpus = await eventually(
        () => getJson(`http://127.0.0.1:${port}/v1/gpus`).catch(() => ({ status: 0, body: {} as Record<string, any> })),
        (r) => r.status === 200,
        60_000,
        250,
      );
      expect(gpus.body.gpus[0]).toMatchObject({ simulated: true });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 90_000);
});

describe('topod CLI without a daemon', () => {
  it('says the daemon is not running and how to start it (exit 2)', async () => {
    const port = await closedPort();
    const run = await topod(['gpus'], { TOPOD_URL: `http://127.0.0.1:${port}` });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `topod: cannot reach the topod daemon at http://127.0.0.1:${port} (ECONNREFUSED). Start it with \`topod serve\` (or \`npm start\`; \`TOPOD_BACKEND=sim\` without a GPU), or point --url / TOPOD_URL at a running one.\n`,
    );
  });
});
