/** `topod gpus`: the GPUs with their probe status, each followed by its MIG devices (as `nvidia-smi -L` lists them). */
import { Command } from 'commander';
import type { GpuSummary, MigDeviceSummary } from '../../model/gpu.js';
import type { CliContext } from '../context.js';
import { gpuTable } from '../format.js';
import { chosenFormat, render, withOutput, type OutputOptions } from '../output.js';

export function gpusCommand(cli: CliContext): Command {
  return withOutput(new Command('gpus').description('list GPUs with their probe status, and their MIG devices')).action(
    async (options: OutputOptions) => {
      const format = chosenFormat(options, cli.io);
      const api = cli.client();
      const answer = await api.getJson<{ gpus: GpuSummary[] }>('/v1/gpus', 'listing GPUs');
      const migDevices = new Map<string, MigDeviceSummary | null>();
      if (format === 'table' || format === 'wide') {
        // Each MIG device's profile (and, wide, its SMs, memory and L2 share); one that vanished since the list reads "MIG ?".
        const uuids = answer.gpus.flatMap((gpu) => gpu.migDeviceUuids);
        const devices = await Promise.all(
          uuids.map((uuid) =>
            api.getJson<MigDeviceSummary>(`/v1/gpus/${encodeURIComponent(uuid)}`, `MIG device ${uuid}`).catch(() => null),
          ),
        );
        for (const [i, uuid] of uuids.entries()) migDevices.set(uuid, devices[i] ?? null);
      }
      cli.io.stdout.write(
        render(format, options, answer, (view) =>
          answer.gpus.length === 0 && view.headers ? 'no GPUs' : gpuTable(answer.gpus, migDevices, view),
        ),
      );
    },
  );
}
