/**
 * Integration-test harness for the real addon against the fake libnvidia-ml:
 * each test gets its own temp dir and scenario file (copied from
 * test/fixtures/nvml), pointed at by TOPOD_FAKE_NVML_SCENARIO, which the fake
 * re-reads whenever the file changes.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NvmlSource } from '../../../server/dynamic/nvml-source.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const FAKE_LIBRARY = path.join(ROOT, 'native/fake-nvml/build/libnvidia-ml.so.1');
export const ADDON = path.join(ROOT, 'native/nvml/build/Release/topod_nvml.node');

/** Fails loudly (not a skip) when the native parts were not built: they build on any machine with g++. */
export function assertNativeBuilt(): void {
  for (const file of [ADDON, FAKE_LIBRARY]) {
    if (!existsSync(file)) throw new Error(`${path.relative(ROOT, file)} is missing: run \`npm run build:native\` first`);
  }
}

// Scenario JSON is test data; `any` keeps edits to it short.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ScenarioJson = Record<string, any>;

export class ScenarioFile {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'topod-nvml-'));
  readonly path = path.join(this.dir, 'scenario.json');
  private writes = 0;

  constructor(fixture: string) {
    copyFileSync(path.join(ROOT, 'test/fixtures/nvml', fixture), this.path);
    process.env.TOPOD_FAKE_NVML_SCENARIO = this.path;
  }

  read(): ScenarioJson {
    return JSON.parse(readFileSync(this.path, 'utf8')) as ScenarioJson;
  }

  /** Rewrites the scenario atomically (write + rename: a new inode the fake notices). */
  edit(change: (scenario: ScenarioJson) => void): void {
    const scenario = this.read();
    change(scenario);
    const temp = path.join(this.dir, `scenario.${++this.writes}.tmp`);
    writeFileSync(temp, JSON.stringify(scenario));
    renameSync(temp, this.path);
  }

  /** Makes the fake log every NVML call from now on (scenario `callLog`). */
  logCalls(): CallLog {
    const log = new CallLog(path.join(this.dir, 'calls.log'));
    this.edit((s) => {
      s.callLog = log.path;
    });
    return log;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The fake's call log: one entry-point name a line. */
export class CallLog {
  constructor(readonly path: string) {
    writeFileSync(path, '');
  }

  /** Calls since the last take(), counted by entry point; empties the log. */
  take(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const name of readFileSync(this.path, 'utf8').split('\n')) {
      if (name) counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    writeFileSync(this.path, '');
    return counts;
  }
}

export function fakeSource(options: { staticMaxAgeMs?: number } = {}): NvmlSource {
  return new NvmlSource({ libraryPath: FAKE_LIBRARY, ...options });
}
