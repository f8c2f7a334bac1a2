/**
 * `topod serve`: the daemon's own entry point (server/main.ts) in a child
 * process with the daemon's V8 flags, signals forwarded. Its options are the
 * daemon's settings, read from config's table (SETTINGS), so `topod serve
 * --help` lists each flag with its environment variable and default, and
 * completion knows them; what was given is handed on for the daemon to
 * parse and check.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { SETTINGS } from '../../config.js';
import { DAEMON_NODE_FLAGS } from '../../node-flags.js';
import type { CliContext } from '../context.js';

type Setting = (typeof SETTINGS)[number];

/** A default as a person reads it: unset, a list, a number or a word. */
export function defaultText(fallback: Setting['fallback']): string {
  if (fallback === null) return 'unset';
  if (Array.isArray(fallback)) return fallback.join(',');
  return String(fallback);
}

/** A switch takes no value (its default is a boolean); every other setting does. */
const isSwitch = (setting: Setting): boolean => typeof setting.fallback === 'boolean';

/** The commander option of one daemon setting: its flag, and in its description the variable and the default. */
export function settingOption(setting: Setting): Option {
  return new Option(
    isSwitch(setting) ? setting.flag : `${setting.flag} <value>`,
    `${setting.help} [${setting.env}; default: ${defaultText(setting.fallback)}]`,
  );
}

/** The daemon's arguments from the options given on the command line (flags win over variables there too). */
export function daemonArgs(command: Command): string[] {
  const args: string[] = [];
  for (const option of command.options) {
    const key = option.attributeName();
    if (command.getOptionValueSource(key) !== 'cli' || option.long === undefined) continue;
    const value = command.getOptionValue(key) as unknown;
    if (option.isBoolean()) args.push(option.long);
    else args.push(option.long, String(value));
  }
  return args;
}

function runDaemon(args: string[]): Promise<number> {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = fileURLToPath(new URL(fromSource ? '../../main.ts' : '../../main.js', import.meta.url));
  const nodeArgs = [...DAEMON_NODE_FLAGS, ...(fromSource ? ['--import', 'tsx'] : []), entry, ...args];
  const child = spawn(process.execPath, nodeArgs, { stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  const handlers = (['SIGINT', 'SIGTERM'] as const).map((signal) => [signal, forward(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      for (const [name, handler] of handlers) process.off(name, handler);
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

export function serveCommand(cli: CliContext): Command {
  const command = new Command('serve').description(
    'run the daemon (what `npm start` runs); each setting is a flag here or an environment variable, the flag winning',
  );
  for (const setting of SETTINGS) command.addOption(settingOption(setting));
  return command.action(async (_options: unknown, self: Command) => cli.exit(await runDaemon(daemonArgs(self))));
}
