#!/usr/bin/env node
// Builds the native pieces that need no GPU: the NVML addon (node-gyp) and the
// fake libnvidia-ml.so.1 used by tests and demos (g++). Incremental: node-gyp
// configures once and `make` rebuilds what changed; the fake is relinked only
// when a source is newer than the library. A missing toolchain skips a piece
// with a message and exit 0, so `npm ci` still succeeds; TOPOD_REQUIRE_NATIVE=1
// turns a skip into a failure (CI).
//
//   node scripts/build-native.mjs            both
//   node scripts/build-native.mjs addon      only the addon
//   node scripts/build-native.mjs fake       only the fake library
//   node scripts/build-native.mjs --clean    remove both build directories first
//   node scripts/build-native.mjs layout-check
//       compile native/nvml/tools/layout-check.cc against the real nvml.h
//       (TOPOD_NVML_INCLUDE, /usr/local/cuda/include or /usr/include) and run it
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const addonDir = path.join(root, 'native/nvml');
const fakeDir = path.join(root, 'native/fake-nvml');
const fakeOutput = path.join(fakeDir, 'build/libnvidia-ml.so.1');
const requireNative = process.env.TOPOD_REQUIRE_NATIVE === '1';

const log = (message) => console.log(`[build-native] ${message}`);

function skip(what, why) {
  const message = `${what} skipped: ${why}`;
  if (requireNative) {
    console.error(`[build-native] ${message} (TOPOD_REQUIRE_NATIVE=1)`);
    process.exit(1);
  }
  log(message);
}

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, stdio: 'inherit', env: process.env });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    console.error(`[build-native] failed: ${command} ${args.join(' ')} (exit ${result.status ?? result.signal})`);
    process.exit(result.status ?? 1);
  }
}

function hasCommand(command) {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
}

/** npm's bundled node-gyp (npm sets npm_config_node_gyp when it runs scripts), else one on PATH. */
function findNodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    path.join(path.dirname(process.execPath), '../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js'),
    path.join(root, 'node_modules/node-gyp/bin/node-gyp.js'),
  ];
  const found = candidates.find((candidate) => candidate && existsSync(candidate));
  return found ? [process.execPath, found] : hasCommand('node-gyp') ? ['node-gyp'] : null;
}

/** Local Node headers (a distro node ships them under <prefix>/include/node) spare a download. */
function nodeDirArgs() {
  if (process.env.npm_config_nodedir) return [`--nodedir=${process.env.npm_config_nodedir}`];
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  return existsSync(path.join(prefix, 'include/node/node_api.h')) ? [`--nodedir=${prefix}`] : [];
}

function buildAddon() {
  const nodeGyp = findNodeGyp();
  if (!nodeGyp) return skip('NVML addon', 'node-gyp not found (it ships with npm)');
  if (!hasCommand(process.env.CXX ?? 'g++') && !hasCommand('c++')) return skip('NVML addon', 'no C++ compiler');
  if (!hasCommand('python3') && !hasCommand('python')) return skip('NVML addon', 'node-gyp needs python3');
  if (!hasCommand('make')) return skip('NVML addon', 'make not found');
  const [command, ...prefixArgs] = nodeGyp;
  const makefile = path.join(addonDir, 'build/Makefile');
  const gypFile = path.join(addonDir, 'binding.gyp');
  if (!existsSync(makefile) || statSync(makefile).mtimeMs < statSync(gypFile).mtimeMs) {
    log('configuring the NVML addon');
    run(command, [...prefixArgs, 'configure', ...nodeDirArgs()], addonDir);
  }
  log('building native/nvml/build/Release/topod_nvml.node');
  run(command, [...prefixArgs, 'build', `--jobs=${os.availableParallelism()}`], addonDir);
}

function newestMtimeMs(dirs) {
  let newest = 0;
  for (const dir of dirs) {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isFile()) newest = Math.max(newest, statSync(path.join(dir, entry.name)).mtimeMs);
    }
  }
  return newest;
}

function buildFake() {
  const cxx = process.env.CXX ?? 'g++';
  if (!hasCommand(cxx)) return skip('fake NVML', `${cxx} not found`);
  const sources = readdirSync(path.join(fakeDir, 'src'))
    .filter((name) => name.endsWith('.cc'))
    .map((name) => path.join(fakeDir, 'src', name));
  const inputs = [fakeDir, path.join(fakeDir, 'src'), path.join(root, 'native/common'), path.join(addonDir, 'src')];
  if (existsSync(fakeOutput) && statSync(fakeOutput).mtimeMs >= newestMtimeMs(inputs)) {
    log('native/fake-nvml/build/libnvidia-ml.so.1 is up to date');
    return;
  }
  mkdirSync(path.dirname(fakeOutput), { recursive: true });
  log('building native/fake-nvml/build/libnvidia-ml.so.1');
  // -z nodelete: the addon dlcloses and reopens NVML to recover from a driver
  // change; the fake's scenario state (pending injected failures) must survive that.
  run(
    cxx,
    [
      '-std=c++17',
      '-O2',
      '-g',
      '-Wall',
      '-Wextra',
      '-fPIC',
      '-shared',
      '-fvisibility=hidden',
      `-I${path.join(root, 'native/common')}`,
      `-I${path.join(addonDir, 'src')}`,
      '-Wl,-soname,libnvidia-ml.so.1',
      '-Wl,-z,nodelete',
      `-Wl,--version-script=${path.join(fakeDir, 'exports.map')}`,
      '-o',
      fakeOutput,
      ...sources,
    ],
    root,
  );
}

/** Compares nvml-subset.h with the real nvml.h; exits non-zero on a mismatch or when no nvml.h is found. */
function layoutCheck() {
  const cxx = process.env.CXX ?? 'g++';
  const includeDirs = [process.env.TOPOD_NVML_INCLUDE, '/usr/local/cuda/include', '/usr/include'];
  const include = includeDirs.find((dir) => dir && existsSync(path.join(dir, 'nvml.h')));
  if (!include) {
    console.error(`[build-native] layout-check: no nvml.h in ${includeDirs.filter(Boolean).join(', ')} (set TOPOD_NVML_INCLUDE)`);
    process.exit(2);
  }
  const output = path.join(addonDir, 'build/layout-check');
  mkdirSync(path.dirname(output), { recursive: true });
  log(`layout-check against ${path.join(include, 'nvml.h')}`);
  run(
    cxx,
    ['-std=c++17', '-Wall', `-I${include}`, `-I${path.join(addonDir, 'src')}`, path.join(addonDir, 'tools/layout-check.cc'), '-o', output],
    root,
  );
  run(output, [], root);
}

const args = new Set(process.argv.slice(2));
if (args.has('layout-check')) {
  layoutCheck();
  process.exit(0);
}
if (args.has('--clean')) {
  rmSync(path.join(addonDir, 'build'), { recursive: true, force: true });
  rmSync(path.join(fakeDir, 'build'), { recursive: true, force: true });
}
const only = ['addon', 'fake'].filter((name) => args.has(name));
if (only.length === 0 || only.includes('addon')) buildAddon();
if (only.length === 0 || only.includes('fake')) buildFake();
