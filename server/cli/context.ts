/**
 * What every command of the CLI is given: the process's streams and
 * environment, the daemon's client (from the global --url), and where its
 * exit status goes. A command is a factory of a commander Command over this
 * context (commands/index.ts lists them).
 */
import type { Command } from 'commander';
import type { TopodClient } from './client.js';

export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
}

export interface CliContext {
  io: CliIo;
  /** The daemon at --url, else TOPOD_URL, else the default; the admin token from TOPOD_ADMIN_TOKEN. */
  client(): TopodClient;
  /** The status the CLI ends with (a command that returns without calling it ends 0). */
  exit(code: number): void;
}

export type CommandFactory = (cli: CliContext) => Command;
