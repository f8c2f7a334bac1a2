/** `topod jobs`: probe jobs, newest first. */
import { Command, Option } from 'commander';
import { JOB_STATES, type JobState, type ProbeJob } from '../../model/job.js';
import type { CliContext } from '../context.js';
import { jobTable } from '../format.js';
import { printOutput, withOutput, type OutputOptions } from '../output.js';

interface JobsOptions extends OutputOptions {
  gpu?: string;
  state?: JobState;
  limit?: string;
}

export function jobsCommand(cli: CliContext): Command {
  const command = new Command('jobs')
    .description('probe jobs, newest first')
    .option('--gpu <id>', 'only this GPU')
    .addOption(
      new Option('--state <state>', 'only jobs in this state (waiting: the GPU is busy with other processes; the phase says why)').choices(
        JOB_STATES,
      ),
    )
    .option('--limit <n>', 'at most n jobs (1…500)');
  return withOutput(command).action(async (options: JobsOptions) => {
    const query = new URLSearchParams();
    if (options.gpu) query.set('gpu', options.gpu);
    if (options.state) query.set('state', options.state);
    if (options.limit) query.set('limit', options.limit);
    const suffix = query.size > 0 ? `?${query}` : '';
    const answer = await cli.client().getJson<{ jobs: ProbeJob[] }>(`/v1/jobs${suffix}`, 'listing jobs');
    printOutput(cli.io, options, answer, (view) => (answer.jobs.length === 0 && view.headers ? 'no jobs' : jobTable(answer.jobs, view)));
  });
}
