/** The CLI and a daemon for it, both in this process: what the CLI tests share. */
import path from 'node:path';
import { PassThrough } from 'node:stream';
import pino from 'pino';
import { runCli } from '../../server/cli/main.js';
import { loadConfig } from '../../server/config.js';
import { createDaemon, type Daemon, type DaemonOptions } from '../../server/daemon.js';
import { DAEMON_TEST_SIM_MODEL } from './daemon-process.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `topod <args>` with `env` as its whole environment, capturing what it writes. */
export async function runCliCaptured(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (chunk: Buffer) => out.push(chunk.toString()));
  stderr.on('data', (chunk: Buffer) => err.push(chunk.toString()));
  const code = await runCli(args, { stdout, stderr, env });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

/**
 * A daemon on the simulated H100 with an 8 MiB L2 (DAEMON_TEST_SIM_MODEL), its database and locks in `dir`, NVML from `nvmlLib` (a path that does not
 * exist: none), listening on a free loopback port and booted. The caller waits for what its test needs.
 */
export async function startSimDaemon(dir: string, nvmlLib: string, options: DaemonOptions = {}): Promise<{ daemon: Daemon; url: string }> {
  const config = loadConfig({
    TOPOD_BACKEND: 'sim',
    TOPOD_SIM_MODEL: DAEMON_TEST_SIM_MODEL,
    TOPOD_DB: path.join(dir, 'topod.sqlite'),
    TOPOD_PORT: '0',
    TOPOD_NVML_LIB: nvmlLib,
    TOPOD_LOCK_DIR: dir,
  });
  const daemon = await createDaemon(config, { logger: pino({ level: 'silent' }), ...options });
  try {
    const url = await daemon.app.listen({ host: '127.0.0.1', port: 0 });
    await daemon.start();
    return { daemon, url };
  } catch (error) {
    await daemon.close();
    throw error;
  }
}
