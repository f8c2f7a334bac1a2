/**
 * vitest globalSetup (vitest.config.ts): one folder for the run, shared by
 * every test file's process through `inject('testRunCacheDir')`
 * (test/helpers/run-cache.ts), removed when the run ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(path.join(tmpdir(), 'topod-test-run-'));
  project.provide('testRunCacheDir', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
