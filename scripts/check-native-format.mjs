#!/usr/bin/env node
// `npm run lint`'s native half: every C, C++ and CUDA file under native/ is as
// clang-format (.clang-format) writes it. `--fix` rewrites them instead.
// Without clang-format it says so and passes, unless CI is set (.ci/run installs it).
import { execFileSync, spawnSync } from 'node:child_process';

const fix = process.argv.includes('--fix');
const files = execFileSync(
  'git',
  ['ls-files', 'native/*.c', 'native/*.cc', 'native/*.cpp', 'native/*.cu', 'native/*.h', 'native/*.hpp', 'test/*.cpp'],
  { encoding: 'utf8' },
)
  .split('\n')
  .filter(Boolean);
const probe = spawnSync('clang-format', ['--version'], { encoding: 'utf8' });
if (probe.error) {
  const line = 'clang-format is not installed (Debian: apt-get install clang-format): native/ formatting not checked';
  if (process.env.CI) {
    console.error(`check-native-format: ${line}`);
    process.exit(1);
  }
  console.log(`check-native-format: ${line}`);
  process.exit(0);
}
const run = spawnSync('clang-format', fix ? ['-i', ...files] : ['--dry-run', '--Werror', ...files], { stdio: 'inherit' });
if (run.status !== 0) {
  console.error(`check-native-format: ${files.length} native files checked; run \`npm run format\` to rewrite them`);
  process.exit(run.status ?? 1);
}
console.log(`check-native-format: ${files.length} native files ${fix ? 'formatted' : 'as clang-format writes them'}`);
