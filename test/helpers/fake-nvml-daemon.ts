/** A daemon process measuring with the simulator while fake NVML plays a scenario file the test edits live. */
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FAKE_LIBRARY } from '../integration/nvml/fake-nvml.js';
import { startDaemon, type DaemonProcess } from './daemon-process.js';

/** Replaces the scenario in one rename, so the library never reads half a file. */
export function writeScenario(scenarioPath: string, value: unknown): void {
  writeFileSync(`${scenarioPath}.tmp`, JSON.stringify(value));
  renameSync(`${scenarioPath}.tmp`, scenarioPath);
}

export function startFakeNvmlDaemon(dir: string, scenarioPath: string, pollMs: number, env: Record<string, string> = {}): Promise<DaemonProcess> {
  return startDaemon({
    TOPOD_BACKEND: 'sim',
    TOPOD_DB: path.join(dir, 'topod.sqlite'),
    TOPOD_NVML_LIB: FAKE_LIBRARY,
    TOPOD_FAKE_NVML_SCENARIO: scenarioPath,
    TOPOD_POLL_MS: String(pollMs),
    ...env,
  });
}
