/**
 * `topod probe --watch`: follows one job through the event stream (polling
 * the job as a safety net for a dropped stream) until it ends. Progress goes
 * to stderr, so stdout carries only the outcome (`topod probe 0 --watch -o
 * json | jq` reads one document): on a terminal a cli-progress bar with the
 * phase name; otherwise one plain line per phase or 10 % step, so logs stay
 * readable. A job waiting for a GPU other processes use shows why (each new
 * reason once).
 */
import { Presets, SingleBar } from 'cli-progress';
import type { ProbeJob } from '../model/job.js';
import type { TopodClient } from './client.js';
import { jobPhaseText } from './format.js';

export interface WatchIo {
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
const POLL_MS = 1000;

interface Display {
  update(job: ProbeJob): void;
  stop(): void;
}

function barDisplay(io: WatchIo): Display {
  const bar = new SingleBar(
    {
      format: 'probe {bar} {percentage}% | {phase}',
      stream: io.stderr,
      hideCursor: true,
      clearOnComplete: false,
      barsize: 30,
      // Draw on a pseudo-terminal too (cli-progress checks isTTY on the stream it is given).
      noTTYOutput: false,
    },
    Presets.shades_classic,
  );
  bar.start(100, 0, { phase: 'queued' });
  return {
    update: (job) =>
      bar.update(Math.round(job.progress * 100), {
        phase: job.state === 'waiting' ? `waiting: ${jobPhaseText(job)}` : (job.phase ?? job.state),
      }),
    stop: () => bar.stop(),
  };
}

function lineDisplay(io: WatchIo): Display {
  let last = '';
  return {
    update(job) {
      const percent = Math.round(job.progress * 100);
      const phase = jobPhaseText(job);
      const line = `${job.state} ${Math.floor(percent / 10) * 10}% ${phase}`.trimEnd();
      if (line === last) return;
      last = line;
      io.stderr.write(`${job.state} ${percent}% ${phase}`.trimEnd() + '\n');
    },
    stop: () => undefined,
  };
}

/** "in 4.0 s" for a job that started and ended, else "". */
export function jobDurationText(job: ProbeJob): string {
  return job.startedAt && job.finishedAt ? ` in ${((Date.parse(job.finishedAt) - Date.parse(job.startedAt)) / 1000).toFixed(1)} s` : '';
}

/** Follows `job` to its end and resolves with the job as it ended; `subscribe` opened the stream before the job was queued, so no event is missed. */
export async function watchJob(
  client: TopodClient,
  job: ProbeJob,
  io: WatchIo,
  subscribe: (onJob: (job: ProbeJob) => void) => Promise<() => void>,
): Promise<ProbeJob> {
  const display = io.stderr.isTTY ? barDisplay(io) : lineDisplay(io);
  let finished: ProbeJob | null = null;
  let wake: (() => void) | null = null;
  const seen = (next: ProbeJob): void => {
    if (next.id !== job.id || finished) return;
    display.update(next);
    if (TERMINAL.has(next.state)) {
      finished = next;
      wake?.();
    }
  };
  const unsubscribe = await subscribe(seen);
  seen(job);
  while (!finished) {
    await new Promise<void>((resolve) => {
      wake = resolve;
      setTimeout(resolve, POLL_MS).unref();
    });
    if (!finished) seen(await client.getJson<ProbeJob>(`/v1/jobs/${encodeURIComponent(job.id)}`, `job ${job.id}`));
  }
  unsubscribe();
  const end = finished as ProbeJob;
  if (end.state === 'succeeded') display.update({ ...end, progress: 1, phase: 'done' });
  display.stop();
  return end;
}
