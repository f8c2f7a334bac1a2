#!/usr/bin/env node
// Builds native/probe/build/topod-probe with CMake: nvcc when found (PATH or
// $CUDA_HOME/bin, default /usr/local/cuda), else hipcc (PATH or $ROCM_PATH/bin). Without either compiler, or without
// cmake, the probe is skipped with a message and exit 0 so `npm ci` succeeds;
// TOPOD_REQUIRE_PROBE=1 (or TOPOD_REQUIRE_NATIVE=1) turns a skip into a failure.
//
// Environment: TOPOD_GPU_PLATFORM=nvidia|amd forces a platform;
// TOPOD_CUDA_ARCHITECTURES (default "80;90"); TOPOD_AMD_ARCHITECTURES (default "gfx90a").
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sourceDir = path.join(root, 'native/probe');
const buildDir = path.join(sourceDir, 'build');
const requireProbe = process.env.TOPOD_REQUIRE_PROBE === '1' || process.env.TOPOD_REQUIRE_NATIVE === '1';
const log = (message) => console.log(`[build-probe] ${message}`);

function skip(why) {
  if (requireProbe) {
    console.error(`[build-probe] topod-probe not built: ${why} (TOPOD_REQUIRE_PROBE=1)`);
    process.exit(1);
  }
  log(`topod-probe skipped: ${why}. The daemon still runs (simulated backend, or no measurements).`);
  process.exit(0);
}

/** Absolute path of an executable on PATH or at one of the fallbacks, or null. */
function findTool(name, fallbacks = []) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return fallbacks.find((candidate) => existsSync(candidate)) ?? null;
}

function run(command, args, env = process.env) {
  log(`${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env });
  if (result.error || result.status !== 0) {
    console.error(
      `[build-probe] failed: ${command} ${args.join(' ')} (${result.error?.message ?? `exit ${result.status ?? result.signal}`})`,
    );
    process.exit(1);
  }
}

const cmake = findTool('cmake');
if (!cmake) skip('cmake not found');
const nvcc = findTool('nvcc', [path.join(process.env.CUDA_HOME ?? '/usr/local/cuda', 'bin/nvcc')]);
const hipcc = findTool('hipcc', [path.join(process.env.ROCM_PATH ?? '/opt/rocm', 'bin/hipcc')]);
const platform = process.env.TOPOD_GPU_PLATFORM ?? (nvcc ? 'nvidia' : hipcc ? 'amd' : null);
if (!platform) skip('neither nvcc (CUDA) nor hipcc (ROCm) found');
if (platform !== 'nvidia' && platform !== 'amd') skip(`TOPOD_GPU_PLATFORM must be nvidia or amd, not "${platform}"`);
if (platform === 'nvidia' && !nvcc) skip('TOPOD_GPU_PLATFORM=nvidia but nvcc not found');
if (platform === 'amd' && !hipcc) skip('TOPOD_GPU_PLATFORM=amd but hipcc not found');

const configure = ['-S', sourceDir, '-B', buildDir, '-DCMAKE_BUILD_TYPE=Release', `-DTOPOD_GPU_PLATFORM=${platform}`];
const env = { ...process.env };
if (platform === 'nvidia') {
  configure.push(`-DCMAKE_CUDA_COMPILER=${nvcc}`, `-DCMAKE_CUDA_ARCHITECTURES=${process.env.TOPOD_CUDA_ARCHITECTURES ?? '80;90'}`);
} else {
  configure.push(`-DCMAKE_CXX_COMPILER=${hipcc}`, `-DTOPOD_AMD_ARCHITECTURES=${process.env.TOPOD_AMD_ARCHITECTURES ?? 'gfx90a'}`);
  env.HIP_PLATFORM = 'amd'; // hipcc would otherwise pick nvcc where both are installed
}
log(`building topod-probe for ${platform} with ${platform === 'nvidia' ? nvcc : hipcc}`);
run(cmake, configure, env);
run(cmake, ['--build', buildDir, '--parallel', String(Math.max(1, os.availableParallelism?.() ?? os.cpus().length))], env);
log(`built ${path.relative(root, path.join(buildDir, 'topod-probe'))}`);
