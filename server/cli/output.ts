/**
 * One output flag for every command, as kubectl has it: `-o table|wide|json|yaml`
 * (table on a terminal, JSON otherwise) and `--no-headers` (rows only). JSON
 * and YAML are the API's answer as it came; table and wide are for people
 * (wide: the table with more columns, where a command has more to show).
 * The flags each command had before (`--json`) stay as hidden, deprecated
 * aliases that say what to write instead.
 */
import { Option, type Command } from 'commander';
import { stringify } from 'yaml';
import { CliError } from './client.js';
import type { CliIo } from './context.js';

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** How a table is drawn: wide adds columns, headers false leaves only the rows. */
export interface TableView {
  wide: boolean;
  headers: boolean;
}

export interface OutputOptions {
  output?: OutputFormat;
  /** commander's `--no-headers`: false when given. */
  headers?: boolean;
  /** Deprecated: -o json. */
  json?: boolean;
}

/** Adds -o/--output (from `formats`, the first the default on a terminal), --no-headers where tables are, and the deprecated --json. */
export function withOutput(command: Command, formats: readonly OutputFormat[] = OUTPUT_FORMATS): Command {
  const terminal = formats.includes('table') ? 'table on a terminal, else json' : formats[0];
  command.addOption(new Option('-o, --output <format>', `output format (default: ${terminal})`).choices(formats));
  if (formats.includes('table')) command.option('--no-headers', 'table and wide: no title or column headings, only the rows');
  command.addOption(new Option('--json', 'deprecated: -o json').hideHelp());
  return command;
}

export function deprecated(io: CliIo, old: string, instead: string): void {
  io.stderr.write(`topod: ${old} is deprecated: use ${instead}\n`);
}

/** The format asked for: -o, else the deprecated alias, else table on a terminal and json otherwise. */
export function chosenFormat(options: OutputOptions, io: CliIo, formats: readonly OutputFormat[] = OUTPUT_FORMATS): OutputFormat {
  if (options.json) {
    deprecated(io, '--json', '-o json');
    if (options.output !== undefined && options.output !== 'json')
      throw new CliError(`--json and -o ${options.output} ask for different outputs: give one -o`);
    return 'json';
  }
  if (options.output !== undefined) return options.output;
  return io.stdout.isTTY === true && formats.includes('table') ? 'table' : formats.includes('json') ? 'json' : (formats[0] as OutputFormat);
}

export function tableView(format: OutputFormat, options: OutputOptions): TableView {
  return { wide: format === 'wide', headers: options.headers !== false };
}

/** JSON or YAML of `value`, or the text `table` draws for people. Ends with one newline. */
export function render(format: OutputFormat, options: OutputOptions, value: unknown, table: (view: TableView) => string): string {
  if (format === 'json') return `${JSON.stringify(value, null, 2)}\n`;
  if (format === 'yaml') return stringify(value, { lineWidth: 0 });
  const text = table(tableView(format, options));
  return text === '' || text.endsWith('\n') ? text : `${text}\n`;
}

/** Writes `value` to stdout in the format the options ask for. */
export function printOutput(io: CliIo, options: OutputOptions, value: unknown, table: (view: TableView) => string): void {
  io.stdout.write(render(chosenFormat(options, io), options, value, table));
}
