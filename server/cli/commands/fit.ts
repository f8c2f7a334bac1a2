/** `topod fit <id> --working-set <size> [--stride <size> --element <size> --pattern … --target …]`: which MIG profiles keep a working set inside their L2 share, and what a strided access over it costs in device-memory traffic. */
import { Command, Option } from 'commander';
import { formatBandwidth } from '../../faces/documents.js';
import type { FitTraffic } from '../../model/fit-traffic-schema.js';
import { TRAFFIC_PATTERN_NAMES, TRAFFIC_TARGET_NAMES } from '../../model/traffic-schema.js';
import { CliError } from '../client.js';
import type { CliContext } from '../context.js';
import { fitText, type FitAnswer } from '../fit-text.js';
import { parseSize } from '../format.js';
import { printOutput, withOutput, type OutputOptions } from '../output.js';

interface FitOptions extends OutputOptions {
  workingSet: string;
  stride?: string;
  element?: string;
  pattern?: string;
  target?: string;
}

function size(text: string, flag: string): number {
  try {
    return parseSize(text);
  } catch (error) {
    throw new CliError(`${flag}: ${(error as Error).message}`);
  }
}

/** The traffic advice for people: its sentence, then the numbers it used. */
export function fitTrafficText(t: FitTraffic): string {
  if (!t.measured || !t.used) return `traffic: ${t.summary}`;
  const u = t.used;
  const bandwidth = (b: FitTraffic['deviceMemoryBandwidth']['read']) => (b ? `${formatBandwidth(b.value)} (${b.source})` : 'not measured');
  return [
    `traffic: ${t.summary}`,
    `  used (${t.method}): read transaction ${u.readTransactionBytes.value} B, read fill ${u.readFillBytes.value} B, write transaction ${u.writeTransactionBytes.value} B, store fill ${u.storeFillBytes.value} B, stores allocate (${t.access.target}) ${u.storesAllocate.value ? 'yes' : 'no'}${u.storesAllocate.source === 'assumed' ? ' (assumed)' : ''}, measured curve factor ${u.curveFactor.value}; device memory read ${bandwidth(t.deviceMemoryBandwidth.read)}, write ${bandwidth(t.deviceMemoryBandwidth.write)}`,
  ].join('\n');
}

export function fitCommand(cli: CliContext): Command {
  const command = new Command('fit')
    .description(
      'which MIG profiles keep a working set inside their L2 share, its latency class, and (with --stride, --element, --pattern or --target) what that access costs in device-memory traffic',
    )
    .argument('<id>', 'GPU index or UUID')
    .requiredOption('--working-set <size>', 'bytes, or with a unit: 24MiB, 512KiB, 2GB')
    .option('--stride <size>', 'bytes from one access to the next (default: the element, contiguous)')
    .option('--element <size>', 'bytes one access moves (default 4)')
    .addOption(new Option('--pattern <pattern>', 'what each access does (default read)').choices(TRAFFIC_PATTERN_NAMES))
    .addOption(new Option('--target <target>', 'the written array: written before (default), or fresh').choices(TRAFFIC_TARGET_NAMES));
  return withOutput(command).action(async (id: string, options: FitOptions) => {
    const query = new URLSearchParams({ workingSetBytes: String(size(options.workingSet, '--working-set')) });
    if (options.stride !== undefined) query.set('strideBytes', String(size(options.stride, '--stride')));
    if (options.element !== undefined) query.set('elementBytes', String(size(options.element, '--element')));
    if (options.pattern !== undefined) query.set('pattern', options.pattern);
    if (options.target !== undefined) query.set('target', options.target);
    const answer = await cli.client().getJson<FitAnswer>(`/v1/gpus/${encodeURIComponent(id)}/fit?${query}`, `fit advice for GPU ${id}`);
    printOutput(cli.io, options, answer, (view) => {
      const text = fitText(answer, view);
      return view.headers && answer.traffic ? `${text}\n${fitTrafficText(answer.traffic)}` : text;
    });
  });
}
