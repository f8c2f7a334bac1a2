/** `topod fit <id> --working-set <size>`: which MIG profiles keep a working set inside their L2 share. */
import { Command } from 'commander';
import { CliError } from '../client.js';
import type { CliContext } from '../context.js';
import { fitText, type FitAnswer } from '../fit-text.js';
import { parseSize } from '../format.js';
import { printOutput, withOutput, type OutputOptions } from '../output.js';

export function fitCommand(cli: CliContext): Command {
  const command = new Command('fit')
    .description('which MIG profiles keep a working set inside their L2 share, and its latency class')
    .argument('<id>', 'GPU index or UUID')
    .requiredOption('--working-set <size>', 'bytes, or with a unit: 24MiB, 512KiB, 2GB');
  return withOutput(command).action(async (id: string, options: OutputOptions & { workingSet: string }) => {
    let bytes: number;
    try {
      bytes = parseSize(options.workingSet);
    } catch (error) {
      throw new CliError((error as Error).message);
    }
    const answer = await cli.client().getJson<FitAnswer>(`/v1/gpus/${encodeURIComponent(id)}/fit?workingSetBytes=${bytes}`, `fit advice for GPU ${id}`);
    printOutput(cli.io, options, answer, (view) => fitText(answer, view));
  });
}
