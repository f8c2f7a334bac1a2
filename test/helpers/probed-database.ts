/**
 * A database a daemon has already probed into, for daemon tests whose
 * subject comes after the first probe (a kill mid-way through the next one,
 * an NVML outage, a damaged result): each of them used to wait for a whole
 * simulated probe of its own first. The daemon probes once per test run and
 * configuration (test/helpers/run-cache.ts); each test gets a copy.
 *
 * The copy is what that daemon left after a clean SIGTERM: its result, raw
 * series and first-probe job, its GPU as NVML or the simulator listed it.
 * Tests whose subject is the first probe itself still start from nothing.
 */
import { copyFileSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startDaemon } from './daemon-process.js';
import { eventually, getJson } from './http.js';
import { onceAcrossProcesses, runCacheDir } from './run-cache.js';

/** Room for a daemon's whole simulated probe on a busy 2-core machine (it takes ~20 s alone). */
export const DAEMON_PROBE_WAIT_MS = 240_000;

export interface ProbedDatabaseRequest {
  /** Names this configuration in the run's folder (a file name). */
  name: string;
  /** The daemon's environment besides TOPOD_DB. */
  env: Record<string, string>;
  /** The GPU ids (index or UUID) whose topology must be served before the daemon stops. */
  gpus: string[];
}

async function probeInto(db: string, request: ProbedDatabaseRequest): Promise<void> {
  const daemon = await startDaemon({ ...request.env, TOPOD_DB: db });
  // The daemon is stopped whatever happens; a failed stop is reported before a failed wait, as a finally clause would.
  let waitFailed = false;
  let waitError: unknown;
  try {
    for (const gpu of request.gpus)
      await eventually(
        () => getJson(`${daemon.baseUrl}/v1/gpus/${gpu}/topology`),
        (r) => r.status === 200,
        DAEMON_PROBE_WAIT_MS,
        100,
      );
  } catch (error) {
    waitFailed = true;
    waitError = error;
  }
  const code = await daemon.stop('SIGTERM');
  if (code !== 0) throw new Error(`the daemon probing ${request.name} exited ${code}; stderr: ${daemon.stderr.join('\n')}`);
  if (waitFailed) throw waitError;
  // A clean close checkpoints the WAL into the file; a leftover one would hold part of the result.
  for (const suffix of ['-wal', '-shm']) if (existsSync(`${db}${suffix}`)) throw new Error(`${db}${suffix} left after a clean stop`);
}

/** Copies the database a daemon with `request.env` probed `request.gpus` into, made once per run, to `dbPath`. */
export async function copyProbedDatabase(request: ProbedDatabaseRequest, dbPath: string): Promise<void> {
  const dir = runCacheDir() ?? mkdtempSync(path.join(tmpdir(), 'topod-probed-'));
  const probed = path.join(dir, `probed-${request.name}.sqlite`);
  await onceAcrossProcesses(probed, async () => {
    const making = path.join(mkdtempSync(path.join(dir, 'probing-')), 'topod.sqlite');
    try {
      await probeInto(making, request);
      renameSync(making, probed);
    } finally {
      rmSync(path.dirname(making), { recursive: true, force: true });
    }
  });
  copyFileSync(probed, dbPath);
}
