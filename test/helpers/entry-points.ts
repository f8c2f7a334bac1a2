/**
 * How the tests start topod's processes (the daemon, the CLI) as a user
 * would: from the build `npm ci` makes (dist/, what `npm start` and bin/topod
 * run) when it is up to date with the sources, else from the TypeScript
 * sources through tsx. A daemon from dist/ boots in 0.68 s of CPU against
 * 1.05 s through tsx, and the suite starts about sixty. Up to date means no
 * file under server/ is newer than the newest file under dist/server/: an
 * edit since the last build (`npm run build:ts`) sends every test back to the
 * sources, so a test never runs stale code.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { DAEMON_NODE_FLAGS } from '../../server/node-flags.js';
import { projectRoot } from '../../server/paths.js';

export const REPO_ROOT = projectRoot();

function newestMtimeMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtimeMs(full) : statSync(full).mtimeMs);
  }
  return newest;
}

let built: boolean | undefined;

/** Whether dist/ holds a build of the current sources (checked once per process). */
export function builtIsCurrent(): boolean {
  if (built === undefined) {
    const dist = path.join(REPO_ROOT, 'dist/server');
    built =
      process.env.TOPOD_TEST_FROM_SOURCES !== '1' &&
      existsSync(path.join(dist, 'main.js')) &&
      newestMtimeMs(dist) >= newestMtimeMs(path.join(REPO_ROOT, 'server'));
  }
  return built;
}

/** node's arguments that run the daemon's entry point (then its own flags). */
export function daemonCommand(): string[] {
  return builtIsCurrent()
    ? [...DAEMON_NODE_FLAGS, path.join(REPO_ROOT, 'dist/server/main.js')]
    : ['--import', 'tsx', path.join(REPO_ROOT, 'server/main.ts')];
}

/** node's arguments that run bin/topod (then the CLI's arguments): bin/topod picks dist/ unless run under tsx. */
export function cliCommand(): string[] {
  const bin = path.join(REPO_ROOT, 'bin/topod');
  return builtIsCurrent() ? [bin] : ['--import', 'tsx', bin];
}
