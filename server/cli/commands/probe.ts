/**
 * `topod probe <id>`: queues a (re-)probe; with --watch follows it to its end,
 * progress on stderr, the outcome on stdout, the exit status the job's.
 */
import { Command } from 'commander';
import type { ProbeJob } from '../../model/job.js';
import type { CliContext } from '../context.js';
import { jobPhaseText } from '../format.js';
import { chosenFormat, render, withOutput, type OutputOptions } from '../output.js';
import { jobDurationText, watchJob } from '../watch.js';

interface ProbeOptions extends OutputOptions {
  only?: string;
  force?: boolean;
  evenIfBusy?: boolean;
  watch?: boolean;
}

export function probeCommand(cli: CliContext): Command {
  const command = new Command('probe')
    .description('queue a (re-)probe of one GPU; --watch follows it to the end (exit status from the job)')
    .argument('<id>', 'GPU index, GPU UUID or MIG device UUID')
    .option('--only <elements>', 'comma-separated elements to re-measure (l1,l2,…); the others are kept')
    .option('--force', 'cancel an active (queued, waiting or running) probe and start over')
    .option(
      '--even-if-busy',
      'measure even while other processes use the GPU, instead of waiting for it to be idle; the result says it was measured on a busy GPU, its confidences capped',
    )
    .option(
      '--watch',
      'show progress on stderr until the job ends (a job waiting for a busy GPU shows why); the job as it ended on stdout',
    );
  return withOutput(command).action(async (id: string, options: ProbeOptions) => {
    const format = chosenFormat(options, cli.io);
    const body = {
      ...(options.only
        ? {
            only: options.only
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
          }
        : {}),
      ...(options.force ? { force: true } : {}),
      ...(options.evenIfBusy ? { evenIfBusy: true } : {}),
    };
    const api = cli.client();
    // Subscribed before the job is queued, so its first progress event is not missed.
    let listener: ((job: ProbeJob) => void) | null = null;
    const stream = options.watch ? await api.events((event) => 'job' in event && listener?.(event.job)).catch(() => null) : null;
    try {
      const job = await api.postJson<ProbeJob>(`/v1/gpus/${encodeURIComponent(id)}/probe`, body, `probe of GPU ${id}`);
      if (!options.watch) {
        cli.io.stdout.write(
          render(
            format,
            options,
            job,
            () =>
              `probe job ${job.id} for ${job.gpuUuid} is ${job.state}${job.state === 'waiting' ? ` (${jobPhaseText(job)})` : ''}; follow it with \`topod jobs\` or --watch`,
          ),
        );
        return;
      }
      const end = await watchJob(api, job, cli.io, async (onJob) => {
        listener = onJob;
        return () => {
          listener = null;
        };
      });
      const outcome = `job ${end.id} ${end.state}${jobDurationText(end)}`;
      if (end.state === 'succeeded') {
        cli.io.stdout.write(render(format, options, end, () => outcome));
        return;
      }
      if (format !== 'table' && format !== 'wide') cli.io.stdout.write(render(format, options, end, () => ''));
      cli.io.stderr.write(`topod: ${outcome}${end.error ? `: [${end.error.code}] ${end.error.message}` : ''}\n`);
      cli.exit(1);
    } finally {
      stream?.close();
    }
  });
}
