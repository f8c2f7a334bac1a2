/**
 * Every kernel source of native/probe compiled once for sm_80 and sm_90, the
 * way CMake builds the probe (CMAKE_CUDA_ARCHITECTURES "80;90": one nvcc run
 * per source, both architectures), with nvcc's intermediates kept: the
 * object, and per architecture the PTX and the cubin ptxas made of it. The
 * compile tests read the objects, the PTX checks the PTX, the SASS check
 * disassembles the cubins: nothing is compiled twice.
 *
 * The build lives in the temp folder under a hash of the compiler's version,
 * the flags and every file of native/probe/src, so the test files of a run
 * share it (the first compiles, the others wait) and a later run compiles
 * again only when a source, a header or the compiler changed.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { onceAcrossProcesses } from '../../helpers/run-cache.js';
import { REPO_ROOT } from './raw-probe.js';

const exec = promisify(execFile);

export const PROBE_SOURCES = path.join(REPO_ROOT, 'native/probe/src');
export const KERNEL_ARCHITECTURES = ['sm_80', 'sm_90'] as const;
export type KernelArchitecture = (typeof KERNEL_ARCHITECTURES)[number];

const computeOf = (arch: KernelArchitecture) => arch.replace('sm_', 'compute_');
/** As CMake passes CMAKE_CUDA_ARCHITECTURES "80;90" to nvcc: SASS and PTX for each. */
const FLAGS = [
  '-std=c++17',
  ...KERNEL_ARCHITECTURES.map((arch) => `--generate-code=arch=${computeOf(arch)},code=[${computeOf(arch)},${arch}]`),
];

export interface KernelBuild {
  /** The kernel sources (native/probe/src/*.cu), by file name. */
  kernels: string[];
  object(kernel: string): string;
  ptx(kernel: string, arch: KernelArchitecture): string;
  cubin(kernel: string, arch: KernelArchitecture): string;
}

const baseOf = (kernel: string) => kernel.replace(/\.cu$/, '');

function layout(dir: string, kernels: string[]): KernelBuild {
  const keep = (kernel: string) => path.join(dir, baseOf(kernel));
  return {
    kernels,
    object: (kernel) => path.join(keep(kernel), `${baseOf(kernel)}.o`),
    ptx: (kernel, arch) => path.join(keep(kernel), `${baseOf(kernel)}.${computeOf(arch)}.ptx`),
    cubin: (kernel, arch) => path.join(keep(kernel), `${baseOf(kernel)}.${computeOf(arch)}.${arch}.cubin`),
  };
}

async function buildKey(nvcc: string, files: string[]): Promise<string> {
  const hash = createHash('sha256');
  hash.update((await exec(nvcc, ['--version'])).stdout);
  hash.update(JSON.stringify(FLAGS));
  for (const file of files)
    hash
      .update(`${file}\0`)
      .update(readFileSync(path.join(PROBE_SOURCES, file)))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** Runs `tasks` with at most `limit` at once (nvcc runs cicc, ptxas and the host compiler: one per core is plenty). */
async function inBatches(tasks: Array<() => Promise<unknown>>, limit: number): Promise<void> {
  const queue = [...tasks];
  await Promise.all(
    Array.from({ length: limit }, async () => {
      for (let task = queue.shift(); task; task = queue.shift()) await task();
    }),
  );
}

const builds = new Map<string, Promise<KernelBuild>>();

/** The build of every kernel for sm_80 and sm_90 with `nvcc`, made once and shared (see the file comment). */
export function kernelBuild(nvcc: string): Promise<KernelBuild> {
  let build = builds.get(nvcc);
  if (!build) {
    build = make(nvcc);
    builds.set(nvcc, build);
  }
  return build;
}

async function make(nvcc: string): Promise<KernelBuild> {
  const files = readdirSync(PROBE_SOURCES).sort();
  const kernels = files.filter((f) => f.endsWith('.cu'));
  const dir = path.join(tmpdir(), `topod-probe-kernels-${await buildKey(nvcc, files)}`);
  await onceAcrossProcesses(dir, async () => {
    const building = `${dir}.${process.pid}.tmp`;
    rmSync(building, { recursive: true, force: true });
    const target = layout(building, kernels);
    const compile = (kernel: string) => async () => {
      const keepDir = path.dirname(target.object(kernel));
      mkdirSync(keepDir, { recursive: true });
      await exec(nvcc, [...FLAGS, '-c', path.join(PROBE_SOURCES, kernel), '-o', target.object(kernel), '--keep', '--keep-dir', keepDir], {
        maxBuffer: 16 << 20,
      });
      // The preprocessed sources are most of what --keep leaves (megabytes each): only what the tests read stays.
      const kept = new Set([
        target.object(kernel),
        ...KERNEL_ARCHITECTURES.flatMap((arch) => [target.ptx(kernel, arch), target.cubin(kernel, arch)]),
      ]);
      for (const file of readdirSync(keepDir)) if (!kept.has(path.join(keepDir, file))) rmSync(path.join(keepDir, file));
    };
    try {
      await inBatches(kernels.map(compile), Math.max(1, availableParallelism()));
      renameSync(building, dir);
    } catch (error) {
      rmSync(building, { recursive: true, force: true });
      throw error;
    }
  });
  return layout(dir, kernels);
}
