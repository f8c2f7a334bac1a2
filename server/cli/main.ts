/**
 * `topod` — the command line (commander). `topod serve` runs the daemon as
 * `npm start` does; every other command talks to a running daemon over HTTP
 * (`--url`, else TOPOD_URL, else http://127.0.0.1:8080; the admin token from
 * TOPOD_ADMIN_TOKEN) and prints for people on a terminal, JSON otherwise.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import type { GpuSummary } from '../model/gpu.js';
import { JOB_STATES, type JobState, type ProbeJob } from '../model/job.js';
import { DAEMON_NODE_FLAGS } from '../node-flags.js';
import type { AnyTopologyDocument } from '../faces/documents.js';
import { CliError, DEFAULT_URL, TopodClient } from './client.js';
import { gpuTable, jobPhaseText, jobTable, parseSize, topologyTable } from './format.js';
import { fitText, type FitAnswer } from './fit-text.js';
import { watchJob, type WatchIo } from './watch.js';

export interface CliIo extends WatchIo {
  env: Record<string, string | undefined>;
}

const here = path.dirname(fileURLToPath(import.meta.url));

/** `topod serve`: the daemon's own entry point in a child process with the daemon's V8 flags, signals forwarded. */
function serve(args: string[]): Promise<number> {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = path.join(here, '..', fromSource ? 'main.ts' : 'main.js');
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

function pathId(id: string): string {
  return encodeURIComponent(id);
}

/** Builds the program; `exit` receives the status each command ends with. */
export function buildProgram(io: CliIo, exit: (code: number) => void): Command {
  const program = new Command('topod');
  program
    .description('GPU topology daemon and its command line: measured caches, MIG L2 shares, probes')
    .option('--url <url>', `the daemon (default: TOPOD_URL, else ${DEFAULT_URL})`)
    .showHelpAfterError()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride();

  const client = (): TopodClient => {
    const url = (program.opts<{ url?: string }>().url ?? io.env['TOPOD_URL']) || DEFAULT_URL;
    return new TopodClient({ url, token: io.env['TOPOD_ADMIN_TOKEN'] || null });
  };
  const json = (value: unknown) => io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  const humans = (flag: boolean | undefined) => !flag && io.stdout.isTTY === true;

  program
    .command('serve')
    .description('run the daemon (what `npm start` runs); every flag of `npm start -- --help` is accepted')
    .allowUnknownOption()
    .helpOption(false)
    .argument('[flags...]', 'daemon flags (--port, --backend sim, …)')
    .action(async (flags: string[]) => exit(await serve(flags)));

  program
    .command('gpus')
    .description('list GPUs with their probe status')
    .option('--json', 'print JSON even on a terminal')
    .action(async (options: { json?: boolean }) => {
      const { gpus } = await client().getJson<{ gpus: GpuSummary[] }>('/v1/gpus', 'listing GPUs');
      if (humans(options.json)) io.stdout.write(`${gpus.length === 0 ? 'no GPUs' : gpuTable(gpus)}\n`);
      else json({ gpus });
    });

  program
    .command('topology')
    .description('the measured topology of one GPU or MIG device')
    .argument('<id>', 'GPU index, GPU UUID or MIG device UUID')
    .addOption(new Option('--format <format>', 'table (default on a terminal), json (default otherwise) or mt4g').choices(['table', 'json', 'mt4g']))
    .action(async (id: string, options: { format?: 'table' | 'json' | 'mt4g' }) => {
      const format = options.format ?? (io.stdout.isTTY ? 'table' : 'json');
      if (format === 'mt4g') {
        io.stdout.write(`${await client().getText(`/v1/gpus/${pathId(id)}/topology?format=mt4g`, `MT4G export of GPU ${id}`, 'application/vnd.mt4g+json')}\n`);
        return;
      }
      const document = await client().getJson<AnyTopologyDocument>(`/v1/gpus/${pathId(id)}/topology`, `topology of GPU ${id}`);
      if (format === 'table') io.stdout.write(`${topologyTable(document)}\n`);
      else json(document);
    });

  program
    .command('probe')
    .description('queue a (re-)probe of one GPU; --watch follows it to the end (exit status from the job)')
    .argument('<id>', 'GPU index, GPU UUID or MIG device UUID')
    .option('--only <elements>', 'comma-separated elements to re-measure (l1,l2,…); the others are kept')
    .option('--force', 'cancel an active (queued, waiting or running) probe and start over')
    .option('--even-if-busy', 'measure even while other processes use the GPU, instead of waiting for it to be idle; the result says it was measured on a busy GPU, its confidences capped')
    .option('--watch', 'show progress until the job ends (a job waiting for a busy GPU shows why)')
    .action(async (id: string, options: { only?: string; force?: boolean; evenIfBusy?: boolean; watch?: boolean }) => {
      const body = {
        ...(options.only ? { only: options.only.split(',').map((s) => s.trim()).filter(Boolean) } : {}),
        ...(options.force ? { force: true } : {}),
        ...(options.evenIfBusy ? { evenIfBusy: true } : {}),
      };
      const api = client();
      // Subscribed before the job is queued, so its first progress event is not missed.
      let listener: ((job: ProbeJob) => void) | null = null;
      const stream = options.watch ? await api.events((event) => 'job' in event && listener?.(event.job)).catch(() => null) : null;
      try {
        const job = await api.postJson<ProbeJob>(`/v1/gpus/${pathId(id)}/probe`, body, `probe of GPU ${id}`);
        if (!options.watch) {
          if (io.stdout.isTTY) io.stdout.write(`probe job ${job.id} for ${job.gpuUuid} is ${job.state}${job.state === 'waiting' ? ` (${jobPhaseText(job)})` : ''}; follow it with \`topod jobs\` or --watch\n`);
          else json(job);
          return;
        }
        exit(
          await watchJob(api, job, io, async (onJob) => {
            listener = onJob;
            return () => {
              listener = null;
            };
          }),
        );
      } finally {
        stream?.close();
      }
    });

  program
    .command('jobs')
    .description('probe jobs, newest first')
    .option('--gpu <id>', 'only this GPU')
    .addOption(new Option('--state <state>', 'only jobs in this state (waiting: the GPU is busy with other processes; the phase says why)').choices(JOB_STATES))
    .option('--limit <n>', 'at most n jobs (1…500)')
    .option('--json', 'print JSON even on a terminal')
    .action(async (options: { gpu?: string; state?: JobState; limit?: string; json?: boolean }) => {
      const query = new URLSearchParams();
      if (options.gpu) query.set('gpu', options.gpu);
      if (options.state) query.set('state', options.state);
      if (options.limit) query.set('limit', options.limit);
      const suffix = query.size > 0 ? `?${query}` : '';
      const { jobs } = await client().getJson<{ jobs: ProbeJob[] }>(`/v1/jobs${suffix}`, 'listing jobs');
      if (humans(options.json)) io.stdout.write(`${jobs.length === 0 ? 'no jobs' : jobTable(jobs)}\n`);
      else json({ jobs });
    });

  program
    .command('export')
    .description('export a GPU’s topology in another tool’s format (MT4G 1.x JSON, readable by sys-sage)')
    .argument('[id]', 'GPU index, GPU UUID or MIG device UUID (default: the only GPU)')
    .addOption(new Option('--format <format>', 'export format').choices(['mt4g']).default('mt4g'))
    .action(async (id: string | undefined) => {
      const api = client();
      let target = id;
      if (target === undefined) {
        const { gpus } = await api.getJson<{ gpus: GpuSummary[] }>('/v1/gpus', 'listing GPUs');
        if (gpus.length !== 1) throw new CliError(`the daemon knows ${gpus.length} GPUs: name one (topod export <index|uuid>; see \`topod gpus\`)`);
        target = String(gpus[0]!.index);
      }
      io.stdout.write(`${await api.getText(`/v1/gpus/${pathId(target)}/topology?format=mt4g`, `MT4G export of GPU ${target}`, 'application/vnd.mt4g+json')}\n`);
    });

  program
    .command('fit')
    .description('which MIG profiles keep a working set inside their L2 share, and its latency class')
    .argument('<id>', 'GPU index or UUID')
    .requiredOption('--working-set <size>', 'bytes, or with a unit: 24MiB, 512KiB, 2GB')
    .option('--json', 'print JSON even on a terminal')
    .action(async (id: string, options: { workingSet: string; json?: boolean }) => {
      let bytes: number;
      try {
        bytes = parseSize(options.workingSet);
      } catch (error) {
        throw new CliError((error as Error).message);
      }
      const answer = await client().getJson<FitAnswer>(`/v1/gpus/${pathId(id)}/fit?workingSetBytes=${bytes}`, `fit advice for GPU ${id}`);
      if (humans(options.json)) io.stdout.write(`${fitText(answer)}\n`);
      else json(answer);
    });

  return program;
}

/** Runs the CLI; resolves with the exit status. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let status = 0;
  const program = buildProgram(io, (code) => {
    status = code;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return status;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof CliError) {
      io.stderr.write(`topod: ${error.message}\n`);
      return error.exitCode;
    }
    io.stderr.write(`topod: ${(error as Error).message}\n`);
    return 1;
  }
}
