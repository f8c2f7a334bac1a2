import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { daemonCommand, REPO_ROOT } from './entry-points.js';

export interface DaemonProcess {
  child: ChildProcess;
  baseUrl: string;
  logs: Array<Record<string, unknown>>;
  stderr: string[];
  /** Resolves with the first log line matching. */
  waitForLog(predicate: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * The simulated GPU a test daemon probes unless its test names another (TOPOD_SIM_MODEL): the H100 with an
 * 8 MiB L2 (server/gpu/sim/models/h100-l2-8mib.ts). These tests are about the daemon's life, not the L2's size,
 * and its whole discovery costs a third of the H100's. It stands in for the H100s fake NVML lists too (the
 * simulator prefers a configured model of a GPU's family); fake NVML's A100 is still simulated as an A100.
 */
export const DAEMON_TEST_SIM_MODEL = 'h100-l2-8mib';

/** Runs the real entry point as a user would (built, or the sources through tsx: ./entry-points.ts), on a free port. */
export async function startDaemon(env: Record<string, string>, args: string[] = []): Promise<DaemonProcess> {
  const child = spawn(process.execPath, [...daemonCommand(), '--port', '0', ...args], {
    cwd: REPO_ROOT,
    // Hermetic by default: a GPU machine's real NVML must not leak into tests that do not ask for it.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TOPOD_LOG_LEVEL: 'info',
      TOPOD_NVML_LIB: '/nonexistent/libnvidia-ml.so.1',
      TOPOD_SIM_MODEL: DAEMON_TEST_SIM_MODEL,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  const stderr: string[] = [];
  const waiters: Array<{ predicate: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line) as Record<string, unknown>;
    } catch {
      parsed = { raw: line };
    }
    logs.push(parsed);
    for (const waiter of [...waiters]) {
      if (waiter.predicate(parsed)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(parsed);
      }
    }
  });
  createInterface({ input: child.stderr! }).on('line', (line) => stderr.push(line));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  // Generous: a daemon from the sources starts through tsx, seconds on a busy 2-core machine.
  const waitForLog = (predicate: (l: Record<string, unknown>) => boolean, timeoutMs = 60_000) => {
    const seen = logs.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`log line not seen in ${timeoutMs} ms; stderr: ${stderr.join('\n')}; logs: ${JSON.stringify(logs.slice(-5))}`)),
        timeoutMs,
      );
      waiters.push({ predicate, resolve: (l) => (clearTimeout(timer), resolve(l)) });
      void exited.then((code) => reject(new Error(`daemon exited (${code}) before the log line; stderr: ${stderr.join('\n')}`)));
    });
  };
  const listening = await waitForLog((l) => l.msg === 'topod listening');
  return {
    child,
    baseUrl: String(listening.address),
    logs,
    stderr,
    waitForLog,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
