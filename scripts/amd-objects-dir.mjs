#!/usr/bin/env node
// The folder the probe's sources are compiled into for an AMD architecture, named by everything the objects
// come from (hipcc's version, the architecture, the flags, every source's name and bytes). CI's
// .ci/hip-check.sh compiles into it, and test/integration/probe/compile.test.ts reads what is there instead of
// compiling the same sources with the same compiler again; on a machine without that step the test compiles
// them once, and later runs find them.
//   node scripts/amd-objects-dir.mjs [hipcc] [arch]   prints the folder
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What every source is compiled with (.ci/hip-check.sh passes the same). */
export const AMD_COMPILE_FLAGS = ['-std=c++17', '-O2', '-Wall'];

/** Written last into the folder, once every source compiled. */
export const COMPLETE_MARKER = 'complete';

const SOURCES = fileURLToPath(new URL('../native/probe/src/', import.meta.url));

export function amdObjectsDir(hipcc = 'hipcc', arch = 'gfx90a') {
  const hash = createHash('sha256');
  // hipcc's own version check asks rocm_agent_enumerator for GPUs, which prints a traceback where none is: not ours.
  const version = execFileSync(hipcc, ['--version'], {
    encoding: 'utf8',
    env: { ...process.env, HIP_PLATFORM: 'amd' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  hash.update(version);
  hash.update(`\0${arch}\0${AMD_COMPILE_FLAGS.join(' ')}\0`);
  for (const file of readdirSync(SOURCES).sort())
    hash
      .update(`${file}\0`)
      .update(readFileSync(path.join(SOURCES, file)))
      .update('\0');
  return path.join(tmpdir(), `topod-probe-${arch}-${hash.digest('hex').slice(0, 16)}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(amdObjectsDir(process.argv[2], process.argv[3]));
}
