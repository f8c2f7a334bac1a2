/** `topod topology <id>`: the measured topology of one GPU or MIG device. */
import { Command, Option } from 'commander';
import type { AnyTopologyDocument } from '../../faces/documents.js';
import type { CliContext } from '../context.js';
import { topologyTable } from '../format.js';
import { deprecated, printOutput, withOutput, type OutputOptions } from '../output.js';
import { fetchMt4g } from './export.js';

const OLD_FORMATS = ['table', 'json', 'mt4g'] as const;

export function topologyCommand(cli: CliContext): Command {
  const command = new Command('topology')
    .description('the measured topology of one GPU or MIG device')
    .argument('<id>', 'GPU index, GPU UUID or MIG device UUID');
  withOutput(command).addOption(
    new Option('--format <format>', 'deprecated: -o, or `topod export` for mt4g').choices(OLD_FORMATS).hideHelp(),
  );
  return command.action(async (id: string, options: OutputOptions & { format?: (typeof OLD_FORMATS)[number] }) => {
    if (options.format === 'mt4g') {
      deprecated(cli.io, '--format mt4g', `topod export ${id}`);
      cli.io.stdout.write(`${await fetchMt4g(cli.client(), id)}\n`);
      return;
    }
    if (options.format !== undefined) {
      deprecated(cli.io, `--format ${options.format}`, `-o ${options.format}`);
      if (options.output === undefined) options.output = options.format;
    }
    const document = await cli
      .client()
      .getJson<AnyTopologyDocument>(`/v1/gpus/${encodeURIComponent(id)}/topology`, `topology of GPU ${id}`);
    printOutput(cli.io, options, document, (view) => topologyTable(document, view));
  });
}
