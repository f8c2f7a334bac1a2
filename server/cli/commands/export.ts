/** `topod export [id]`: a GPU's topology in another tool's format (MT4G 1.x JSON, readable by sys-sage). */
import { Command, Option } from 'commander';
import type { GpuSummary } from '../../model/gpu.js';
import { CliError, type TopodClient } from '../client.js';
import type { CliContext } from '../context.js';
import { chosenFormat, render, withOutput, type OutputOptions } from '../output.js';

/** The MT4G file as the daemon wrote it (its number types kept: MT4G writes 38.0 where JSON readers see 38). */
export function fetchMt4g(client: TopodClient, id: string): Promise<string> {
  return client.getText(`/v1/gpus/${encodeURIComponent(id)}/topology?format=mt4g`, `MT4G export of GPU ${id}`, 'application/vnd.mt4g+json');
}

export function exportCommand(cli: CliContext): Command {
  const command = new Command('export')
    .description('export a GPU’s topology in another tool’s format (MT4G 1.x JSON, readable by sys-sage)')
    .argument('[id]', 'GPU index, GPU UUID or MIG device UUID (default: the only GPU)')
    .addOption(new Option('--format <format>', 'the other tool’s format').choices(['mt4g']).default('mt4g'));
  return withOutput(command, ['json', 'yaml']).action(async (id: string | undefined, options: OutputOptions) => {
    const format = chosenFormat(options, cli.io, ['json', 'yaml']);
    const api = cli.client();
    let target = id;
    if (target === undefined) {
      const { gpus } = await api.getJson<{ gpus: GpuSummary[] }>('/v1/gpus', 'listing GPUs');
      if (gpus.length !== 1)
        throw new CliError(`the daemon knows ${gpus.length} GPUs: name one (topod export <index|uuid>; see \`topod gpus\`)`);
      target = String(gpus[0]!.index);
    }
    const text = await fetchMt4g(api, target);
    // JSON is passed on byte for byte; YAML is the same document.
    cli.io.stdout.write(format === 'json' ? `${text}\n` : render('yaml', options, JSON.parse(text) as unknown, () => ''));
  });
}
