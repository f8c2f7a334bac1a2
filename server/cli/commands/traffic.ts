/** `topod traffic <id> --stride <size> --footprint <size>`: the device-memory bytes a strided pattern moves (GET /v1/gpus/{id}/traffic). */
import { Command, Option } from 'commander';
import type { TrafficPrediction } from '../../model/traffic-prediction-schema.js';
import { formatBytes } from '../../faces/documents.js';
import { TRAFFIC_PATTERN_NAMES, TRAFFIC_TARGET_NAMES } from '../../model/traffic-schema.js';
import { CliError } from '../client.js';
import type { CliContext } from '../context.js';
import { parseSize, table } from '../format.js';
import { printOutput, withOutput, type OutputOptions, type TableView } from '../output.js';

interface TrafficOptions extends OutputOptions {
  stride: string;
  footprint: string;
  element: string;
  pattern: string;
  target: string;
}

function size(text: string, flag: string): number {
  try {
    return parseSize(text);
  } catch (error) {
    throw new CliError(`${flag}: ${(error as Error).message}`);
  }
}

/** The prediction for people: what one pass moves, then the measured numbers it used. */
export function trafficText(p: TrafficPrediction, view: TableView = { wide: false, headers: true }): string {
  const q = p.query;
  const rows = table(
    ['pattern', 'stride', 'element', 'accesses', 'DRAM read', 'DRAM write', 'per useful byte', 'model alone', 'line-size model'],
    [
      [
        `${q.pattern} (${q.target})`,
        formatBytes(q.strideBytes),
        `${q.elementBytes} B`,
        String(p.accesses),
        formatBytes(p.dramReadBytes),
        formatBytes(p.dramWriteBytes),
        p.bytesPerUsefulByte.toFixed(2),
        p.modelBytesPerUsefulByte.toFixed(2),
        p.lineModelBytesPerUsefulByte.toFixed(2),
      ],
    ],
    view.headers,
  );
  if (!view.headers) return rows;
  const u = p.used;
  const flag = (f: { value: boolean; source: string }) => `${f.value ? 'yes' : 'no'}${f.source === 'assumed' ? ' (assumed)' : ''}`;
  return [
    `${p.gpuUuid}: one pass over ${formatBytes(q.footprintBytes)}`,
    rows,
    `used (${u.readFillBytes.method}, measured ${p.measuredAt}): read transaction ${u.readTransactionBytes.value} B, read fill ${u.readFillBytes.value} B, write transaction ${u.writeTransactionBytes.value} B, store fill ${u.storeFillBytes.value} B; stores allocate: fresh ${flag(u.storesAllocate.fresh)}, written ${flag(u.storesAllocate.written)}; whole-sector stores read: ${flag(u.fullSectorStoresRead)}; measured curve factor ${u.curveFactor.value}`,
  ].join('\n');
}

export function trafficCommand(cli: CliContext): Command {
  const command = new Command('traffic')
    .description(
      'the device-memory bytes one pass of a strided access moves, per useful byte (measured traffic; probe with --only traffic first)',
    )
    .argument('<id>', 'GPU index or UUID')
    .requiredOption('--stride <size>', 'bytes from one access to the next: 4, 128, 4KiB')
    .requiredOption('--footprint <size>', 'bytes the array spans: 800MB, 1GiB')
    .option('--element <size>', 'bytes one access moves', '4')
    .addOption(new Option('--pattern <pattern>', 'what each access does').choices(TRAFFIC_PATTERN_NAMES).default('read'))
    .addOption(
      new Option('--target <target>', 'the written array: written before, or fresh').choices(TRAFFIC_TARGET_NAMES).default('written'),
    );
  return withOutput(command).action(async (id: string, options: TrafficOptions) => {
    const query = new URLSearchParams({
      strideBytes: String(size(options.stride, '--stride')),
      footprintBytes: String(size(options.footprint, '--footprint')),
      elementBytes: String(size(options.element, '--element')),
      pattern: options.pattern,
      target: options.target,
    });
    const answer = await cli
      .client()
      .getJson<TrafficPrediction>(`/v1/gpus/${encodeURIComponent(id)}/traffic?${query}`, `traffic prediction for GPU ${id}`);
    printOutput(cli.io, options, answer, (view) => trafficText(answer, view));
  });
}
