/**
 * `topod` — the command line (commander). `topod serve` runs the daemon as
 * `npm start` does; every other command talks to a running daemon over HTTP
 * (`--url`, else TOPOD_URL, else http://127.0.0.1:8080; the admin token from
 * TOPOD_ADMIN_TOKEN) and prints in the format `-o` names: a table for people
 * on a terminal, JSON otherwise. The commands are listed in commands/index.ts.
 */
import { Command, CommanderError } from 'commander';
import { TOPOD_VERSION } from '../version.js';
import { CliError, DEFAULT_URL, TopodClient } from './client.js';
import { COMMANDS } from './commands/index.js';
import type { CliContext, CliIo } from './context.js';

export type { CliIo } from './context.js';

/** Builds the program; `exit` receives the status each command ends with. */
export function buildProgram(io: CliIo, exit: (code: number) => void): Command {
  const program = new Command('topod');
  program
    .description('GPU topology daemon and its command line: measured caches, MIG L2 shares, probes')
    .option('--url <url>', `the daemon (default: TOPOD_URL, else ${DEFAULT_URL})`)
    .version(TOPOD_VERSION, '-V, --version', 'print the version')
    .showHelpAfterError()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride();

  const cli: CliContext = {
    io,
    client: () => {
      const url = (program.opts<{ url?: string }>().url ?? io.env['TOPOD_URL']) || DEFAULT_URL;
      return new TopodClient({ url, token: io.env['TOPOD_ADMIN_TOKEN'] || null });
    },
    exit,
  };
  for (const factory of COMMANDS) program.addCommand(factory(cli).copyInheritedSettings(program));
  return program;
}

/** Runs the CLI; resolves with the exit status. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let status = 0;
  const program = buildProgram(io, (code) => {
    status = code;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return status;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof CliError) {
      io.stderr.write(`topod: ${error.message}\n`);
      return error.exitCode;
    }
    io.stderr.write(`topod: ${(error as Error).message}\n`);
    return 1;
  }
}
