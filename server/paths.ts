import { existsSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The package root, found from this file whether it runs from server/ (tsx) or dist/server/ (built). */
export function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json')) || !existsSync(path.join(dir, 'migrations'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('topod: cannot find the package root (package.json beside migrations/)');
    dir = parent;
  }
  return dir;
}

/**
 * A worker thread's entry `name` beside the module at `moduleUrl`, with what
 * the thread must be started with: run from TypeScript sources (tests, tsx
 * scripts), the worker needs tsx's loader to import them too.
 */
export function workerEntry(moduleUrl: string, name: string): { filename: string; execArgv: string[] } {
  const fromSources = moduleUrl.endsWith('.ts');
  return { filename: new URL(`./${name}.${fromSources ? 'ts' : 'js'}`, moduleUrl).href, execArgv: fromSources ? ['--import', 'tsx'] : [] };
}

/**
 * Piscina's niceIncrement for a pool of the daemon's worker threads (TOPOD_WORKER_NICE). Linux keeps a nice
 * value per thread, so only the pool's threads are lowered; elsewhere nice() lowers the whole process, event
 * loop included, so nothing is.
 */
export function workerNiceIncrement(nice: number | undefined): number {
  return process.platform === 'linux' ? (nice ?? 0) : 0;
}

/**
 * Why worker threads cannot be lowered here, or null when they can. Piscina lowers them through the optional
 * @napi-rs/nice addon and says nothing when it cannot load it.
 */
export function workerNiceUnavailable(load: (id: string) => unknown = createRequire(import.meta.url)): string | null {
  if (process.platform !== 'linux') return `${process.platform} has no nice value per thread`;
  try {
    load('@napi-rs/nice');
    return null;
  } catch (error) {
    return `@napi-rs/nice does not load: ${error instanceof Error ? error.message : String(error)}`;
  }
}
