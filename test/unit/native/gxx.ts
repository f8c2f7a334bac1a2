import { spawnSync } from 'node:child_process';
import path from 'node:path';

export const hasGxx = spawnSync('g++', ['--version']).status === 0;

/** Compiles one C++17 test driver into `dir` with warnings as errors; returns the binary path or throws with the compiler's output. */
export function compileDriver(source: string, dir: string): string {
  const binary = path.join(dir, path.basename(source, '.cpp'));
  const build = spawnSync('g++', ['-std=c++17', '-Wall', '-Wextra', '-Werror', '-O1', source, '-o', binary], { encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`g++ ${source} failed:\n${build.stderr}`);
  return binary;
}

/** Runs a driver with stdin lines; returns its stdout lines. */
export function runDriver(binary: string, lines: string[] = [], args: string[] = []): string[] {
  const out = spawnSync(binary, args, { input: lines.join('\n') + '\n', encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`${binary} exited ${out.status}: ${out.stderr}`);
  return out.stdout.trimEnd().split('\n');
}
