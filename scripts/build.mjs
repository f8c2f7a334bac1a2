#!/usr/bin/env node
// `npm ci` (prepare) and `npm run build`: everything that can be built on this machine.
// Native parts that need a toolchain this machine lacks are skipped with a clear message;
// the TypeScript build always runs.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function step(title, command, args) {
  console.log(`[topod build] ${title}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`[topod build] ${title} failed (exit ${result.status ?? result.signal})`);
    process.exit(result.status ?? 1);
  }
}

step('native: NVML addon and fake NVML', process.execPath, ['scripts/build-native.mjs']);
step('native: topod-probe', process.execPath, ['scripts/build-probe.mjs']);
step('typescript', process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json']);
