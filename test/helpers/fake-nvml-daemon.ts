/** A daemon process measuring with the simulator while fake NVML plays a scenario file the test edits live. */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FAKE_LIBRARY } from '../integration/nvml/fake-nvml.js';
import { startDaemon, type DaemonProcess } from './daemon-process.js';
import { copyProbedDatabase } from './probed-database.js';
import { runCacheDir } from './run-cache.js';

/** Replaces the scenario in one rename, so the library never reads half a file. */
export function writeScenario(scenarioPath: string, value: unknown): void {
  const partial = `${scenarioPath}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify(value));
  renameSync(partial, scenarioPath);
}

function fakeNvmlEnv(dir: string, scenarioPath: string, pollMs: number): Record<string, string> {
  return {
    TOPOD_BACKEND: 'sim',
    TOPOD_DB: path.join(dir, 'topod.sqlite'),
    TOPOD_NVML_LIB: FAKE_LIBRARY,
    TOPOD_FAKE_NVML_SCENARIO: scenarioPath,
    TOPOD_POLL_MS: String(pollMs),
  };
}

export function startFakeNvmlDaemon(
  dir: string,
  scenarioPath: string,
  pollMs: number,
  env: Record<string, string> = {},
): Promise<DaemonProcess> {
  return startDaemon({ ...fakeNvmlEnv(dir, scenarioPath, pollMs), ...env });
}

/**
 * Puts at `<dir>/topod.sqlite` (where startFakeNvmlDaemon keeps it) a copy of the database a fake-NVML daemon
 * probed every GPU of test/fixtures/nvml/`fixture` into: made once per test run (test/helpers/probed-database.ts).
 */
export async function useFakeNvmlProbedDatabase(dir: string, fixture: string): Promise<void> {
  const scenario = JSON.parse(readFileSync(path.join('test/fixtures/nvml', fixture), 'utf8')) as { devices: Array<{ uuid: string }> };
  const scenarioDir = path.join(runCacheDir() ?? mkdtempSync(path.join(tmpdir(), 'topod-scenario-')), `scenario-${fixture}`);
  const scenarioPath = path.join(scenarioDir, 'scenario.json');
  if (!existsSync(scenarioPath)) {
    mkdirSync(scenarioDir, { recursive: true });
    writeScenario(scenarioPath, scenario);
  }
  const { TOPOD_DB: _db, ...env } = fakeNvmlEnv(scenarioDir, scenarioPath, 1000);
  await copyProbedDatabase(
    { name: `fake-nvml-${fixture}`, env, gpus: scenario.devices.map((device) => device.uuid) },
    path.join(dir, 'topod.sqlite'),
  );
}
