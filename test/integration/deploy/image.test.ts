/**
 * The container image's contents, without a container engine (none runs on
 * CI's machines): the Dockerfile's runtime stage is assembled file by file as
 * its COPY lines say (read with dockerfile-ast, not a copy of the list), the
 * daemon is started from that tree with the image's ENV, CMD and the
 * `docker run` flags of docs/operating.md, and it must answer — the dashboard included,
 * whose ui/ the image once left out (issue 22: every deployment was down).
 *
 * What the build stage makes is taken from this checkout: `npm ci` built
 * node_modules and the native parts here as the image's `RUN npm ci` does
 * there; dist/ is the TypeScript of server/ transpiled afresh (esbuild), so
 * a stale local dist/ never decides the outcome. A file a runtime COPY names
 * that the build stage neither copies in nor builds is missing, as it would
 * be in `docker build`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inRoot, readStages, type Stage } from '../../helpers/dockerfile-stages.js';
import { useTempDir } from '../../helpers/temp-dir.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const DOCKERFILE = readFileSync(path.join(repo, 'Dockerfile'), 'utf8');
const OPERATING_DOC = readFileSync(path.join(repo, 'docs/operating.md'), 'utf8');

/** docs/operating.md's "## Docker" section, up to the next section. */
function dockerSection(): string {
  const start = OPERATING_DOC.indexOf('\n## Docker');
  const end = OPERATING_DOC.indexOf('\n## ', start + 1);
  return start < 0 ? '' : OPERATING_DOC.slice(start, end < 0 ? undefined : end);
}

/** What the build stage's `RUN npm ci` writes under its WORKDIR (scripts/build.mjs), besides what it was given. */
const BUILD_OUTPUTS = ['node_modules', 'dist', 'native/nvml/build', 'native/fake-nvml/build', 'native/probe/build'];
/** Outputs only a GPU toolchain builds (nvcc in the CUDA devel image): absent here, they are left out with a note. */
const GPU_TOOLCHAIN_OUTPUTS = ['native/probe/build/topod-probe'];

const tempDir = useTempDir('topod-image-');
let transpiledDist = '';

afterAll(() => rmSync(path.dirname(transpiledDist), { recursive: true, force: true }));
beforeAll(async () => {
  transpiledDist = path.join(mkdtempSync(path.join(tmpdir(), 'topod-image-dist-')), 'dist');
  const entryPoints = (readdirSync(path.join(repo, 'server'), { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(repo, 'server', f));
  await build({
    entryPoints,
    outdir: path.join(transpiledDist, 'server'),
    outbase: path.join(repo, 'server'),
    format: 'esm',
    platform: 'node',
    target: 'node22',
    logLevel: 'silent',
  });
}, 60_000);

interface Assembled {
  root: string;
  missing: string[];
  leftOut: string[];
}

/** Where the build stage's `imagePath` comes from in this checkout, or null when the build stage has no such file. */
function buildStageSource(buildStage: Stage, imagePath: string): string | null {
  const relative = path.posix.relative(buildStage.workdir, imagePath);
  const output = BUILD_OUTPUTS.find((o) => relative === o || relative.startsWith(`${o}/`));
  if (output === 'dist') return path.join(transpiledDist, path.posix.relative('dist', relative));
  if (output) return path.join(repo, relative);
  for (const copy of buildStage.copies.filter((c) => c.from === null)) {
    for (const source of copy.sources) {
      const target = copy.intoFolder ? path.posix.join(copy.destination, path.posix.basename(source)) : copy.destination;
      if (imagePath === target || imagePath.startsWith(`${target}/`))
        return path.join(repo, source, path.posix.relative(target, imagePath));
    }
  }
  return null;
}

/** The runtime stage's files under `root` (the image's `/`), as its COPY lines list them. */
function assembleRuntime(dockerfileText: string, root: string): Assembled & { stage: Stage } {
  const stages = readStages(dockerfileText);
  const runtime = stages.at(-1)!;
  const missing: string[] = [];
  const leftOut: string[] = [];
  for (const copy of runtime.copies) {
    // The node binary of the `node` stage is the one running this test.
    if (copy.from === 'node') continue;
    const fromStage = copy.from === null ? null : stages.find((s) => s.name === copy.from);
    for (const source of copy.sources) {
      const local = fromStage ? buildStageSource(fromStage, source) : path.join(repo, source);
      const target = inRoot(root, copy.intoFolder ? path.posix.join(copy.destination, path.posix.basename(source)) : copy.destination);
      const relative = fromStage ? path.posix.relative(fromStage.workdir, source) : source;
      if (local === null || !existsSync(local)) {
        if (GPU_TOOLCHAIN_OUTPUTS.includes(relative)) leftOut.push(relative);
        else missing.push(`${copy.from ? `--from=${copy.from} ` : ''}${source}`);
        continue;
      }
      mkdirSync(path.dirname(target), { recursive: true });
      // node_modules is hundreds of MB: linked, not copied (resolution follows the link).
      if (relative === 'node_modules') symlinkSync(local, target);
      else cpSync(local, target, { recursive: true });
    }
  }
  return { root, missing, leftOut, stage: runtime };
}

/** The `docker run` line of docs/operating.md (section "Docker"), split into words as sh would. */
function readmeDockerRun(): string[] {
  const section = dockerSection();
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  const line =
    block
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .find((l) => l.trim().startsWith('docker run')) ?? '';
  return [...line.replace(/\s+#.*$/, '').matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

interface RunOptions {
  env: Record<string, string>;
  /** Image paths of named volumes and bind mounts. */
  mounts: Array<{ source: string; destination: string }>;
}

function runOptions(words: string[]): RunOptions {
  const options: RunOptions = { env: {}, mounts: [] };
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === '-e' || word === '--env') {
      const [name, ...value] = (words[++i] ?? '').split('=');
      options.env[name!] = value.join('=');
    } else if (word === '-v' || word === '--volume') {
      const [source = '', destination = ''] = (words[++i] ?? '').split(':');
      options.mounts.push({ source, destination });
    }
  }
  return options;
}

interface Started {
  port: number;
  stop(): Promise<void>;
}

/**
 * Runs the image's CMD in the assembled tree with the image's ENV and the
 * documented flags. Paths under a VOLUME or mount land inside `root`; bind
 * mounts of host files (the token) get a test token. Only the port (0: any
 * free one, as `-p` maps it) and what keeps the run hermetic (no real NVML,
 * no GPU, locks inside `root`) differ from the container.
 */
async function startImage(assembled: Assembled & { stage: Stage }, run: RunOptions, token: string): Promise<Started> {
  const { root, stage } = assembled;
  const mountPoints = [...stage.volumes, ...run.mounts.map((m) => m.destination)];
  for (const mount of run.mounts) {
    const target = inRoot(root, mount.destination);
    mkdirSync(path.dirname(target), { recursive: true });
    if (mount.source.includes('/')) writeFileSync(target, `${token}\n`);
    else mkdirSync(target, { recursive: true });
  }
  for (const volume of stage.volumes) mkdirSync(inRoot(root, volume), { recursive: true });
  const mapped = (value: string): string =>
    mountPoints.some((m) => value === m || value.startsWith(`${m}/`)) ? inRoot(root, value) : value;
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
  for (const [name, value] of Object.entries({ ...stage.env, ...run.env })) env[name] = mapped(value);
  Object.assign(env, {
    TOPOD_PORT: '0',
    TOPOD_NVML_LIB: '/nonexistent/libnvidia-ml.so.1',
    CUDA_VISIBLE_DEVICES: '',
    TOPOD_LOCK_DIR: inRoot(root, '/run/topod'),
  });
  const [command, ...args] = stage.cmd;
  const child = spawn(command === 'node' ? process.execPath : command!, args, {
    cwd: inRoot(root, stage.workdir),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (l) => stderr.push(l));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no 'topod listening' in 20 s; stderr: ${stderr.join('\n')}`)), 20_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.includes('"topod listening"')) return;
      clearTimeout(timer);
      resolve(Number(new URL(String((JSON.parse(line) as { address: string }).address)).port));
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the daemon exited (${code}) before listening: ${stderr.join('\n')}`));
    });
  });
  return {
    port,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

describe('the container image (Dockerfile runtime stage)', () => {
  const token = 'image-test-token-0123456789';

  it('holds every file the daemon needs: it starts with the documented docker run and answers', async () => {
    const assembled = assembleRuntime(DOCKERFILE, tempDir());
    expect(assembled.missing, 'runtime COPY sources the build stage has not got').toEqual([]);
    if (assembled.leftOut.length > 0)
      console.info(`[image test] left out (built only with a GPU toolchain): ${assembled.leftOut.join(', ')}`);
    const run = runOptions(readmeDockerRun());
    expect(
      run.mounts.map((m) => m.destination),
      "the documented docker run keeps the database in the image's volume",
    ).toEqual(expect.arrayContaining(assembled.stage.volumes));
    const started = await startImage(assembled, run, token);
    try {
      await answers(`http://127.0.0.1:${started.port}`, started.port, assembled.stage);
    } finally {
      await started.stop();
    }
  }, 60_000);

  async function answers(base: string, port: number, stage: Stage): Promise<void> {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const page = await fetch(`${base}/`);
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect((await fetch(`${base}/ui/app.js`)).status).toBe(200);
    expect((await fetch(`${base}/openapi.json`)).status).toBe(200);
    expect(await (await fetch(`${base}/v1/gpus`)).json()).toMatchObject({ gpus: expect.any(Array) });
    // The token the documented docker run mounts is the one the daemon checks.
    expect((await fetch(`${base}/v1/gpus/0/probe`, { method: 'POST' })).status).toBe(401);
    expect((await fetch(`${base}/v1/gpus/0/probe`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })).status).not.toBe(
      401,
    );

    // The image's HEALTHCHECK, as Docker runs it (sh -c), says healthy.
    const healthcheck = spawnSync('/bin/sh', ['-c', stage.healthcheck ?? 'exit 9'], {
      env: { PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`, TOPOD_PORT: String(port) },
      timeout: 10_000,
    });
    expect(healthcheck.status).toBe(0);
  }

  it('fails when a file the daemon needs is left out of the runtime stage (ui/, as before issue 22)', async () => {
    const withoutUi = DOCKERFILE.split('\n')
      .filter((line) => !/^COPY\b.*\bui\b/.test(line))
      .join('\n');
    expect(withoutUi).not.toBe(DOCKERFILE);
    const assembled = assembleRuntime(withoutUi, tempDir());
    await expect(startImage(assembled, runOptions(readmeDockerRun()), token)).rejects.toThrow(/ui\/index\.html not found/);
  }, 60_000);

  it("docs/operating.md names the image's Node major version, and its docker run sets an admin token", () => {
    const nodeStage = readStages(DOCKERFILE).find((s) => s.name === 'node');
    const major = /^node:(\d+)/.exec(nodeStage?.image ?? '')?.[1];
    expect(major).toBeDefined();
    const section = dockerSection();
    expect(/runtime image with Node (\d+)/.exec(section)?.[1]).toBe(major);
    const run = runOptions(readmeDockerRun());
    expect(Object.keys(run.env)).toEqual(expect.arrayContaining(['TOPOD_ADMIN_TOKEN_FILE']));
  });
});
