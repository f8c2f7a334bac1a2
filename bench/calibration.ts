/**
 * `npm run bench:calibration [-- --runs 40 --intensities 0,0.1,0.25,0.5,1 --jobs 2 --strategies l1,l2,bandwidth]`
 *
 * Calibrated confidence (issue 17 item 3): seeded discoveries on the
 * simulated GPU with another tenant at several intensities
 * (server/gpu/sim/interference.ts), each value held against the model's
 * truth (server/gpu/sim/truth.ts). Prints, per intensity, the runs, the
 * values compared, those that differ from the truth and the highest
 * confidence any of them carries. The goal: none that differs at 0.9 or
 * more, and none that differs at intensity 0.
 *
 * Discoveries run in `--jobs` child processes (one discovery at a time
 * each). A full simulated discovery takes 15–60 s of JavaScript under
 * interference, so by default each runs only the strategies interference
 * changes most (./calibration-run.ts), as discover() runs and analyses
 * them; `--strategies all` runs full discoveries.
 */
import { fork } from 'node:child_process';
import os from 'node:os';
import { Command } from 'commander';
import { STRATEGIES } from '../server/discovery/index.js';
import type { TruthCheck } from '../server/gpu/sim/truth.js';
import { CALIBRATION_STRATEGIES, calibrationRun, SURE_CONFIDENCE } from './calibration-run.js';

interface Task {
  intensity: number;
  seed: number;
}

interface RunResult extends Task {
  checks: TruthCheck[];
  wallMs: number;
}

const FIRST_SEED = 1700;

const options = new Command()
  .option('--runs <n>', 'seeded discoveries per intensity', (value) => Number.parseInt(value, 10), 40)
  .option(
    '--intensities <list>',
    'tenant intensities, 0..1, comma-separated',
    (value) => value.split(',').map(Number),
    [0, 0.1, 0.25, 0.5, 1],
  )
  .option(
    '--jobs <n>',
    'child processes discovering at once',
    (value) => Number.parseInt(value, 10),
    Math.max(1, os.availableParallelism()),
  )
  .option(
    '--strategies <names>',
    `strategies to run, comma-separated, of ${STRATEGIES.map((strategy) => strategy.name).join(', ')} ("all": full discoveries)`,
    CALIBRATION_STRATEGIES.join(','),
  )
  .option('--model <id>', 'simulated GPU model', 'h100-sxm5-80gb')
  .option('--child', 'internal: run tasks sent by the parent')
  .parse()
  .opts<{ runs: number; intensities: number[]; jobs: number; strategies: string; model: string; child?: boolean }>();

const chosen = options.strategies === 'all' ? null : options.strategies.split(',').map((name) => name.trim());

async function runOne(task: Task): Promise<RunResult> {
  const run = await calibrationRun({ ...task, modelId: options.model, strategies: chosen });
  return { ...task, checks: run.checks, wallMs: run.wallMs };
}

function child(): void {
  process.on('message', (task: Task) => {
    runOne(task).then(
      (result) => process.send!(result),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}

async function parent(): Promise<void> {
  const tasks: Task[] = options.intensities.flatMap((intensity) =>
    Array.from({ length: options.runs }, (_, i) => ({ intensity, seed: FIRST_SEED + i })),
  );
  const jobs = Math.max(1, Math.min(options.jobs, tasks.length));
  console.log(
    `[calibration] ${tasks.length} seeded discoveries (${options.runs} per intensity) on the simulated ${options.model}, ${chosen ? `strategies ${chosen.join(', ')} only` : 'full discoveries'}, in ${jobs} child processes`,
  );
  const results: RunResult[] = [];
  const began = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: jobs }, () => {
      const worker = fork(new URL(import.meta.url).pathname, [...process.argv.slice(2), '--child'], { stdio: 'inherit' });
      return new Promise<void>((resolve, reject) => {
        const send = () => {
          const task = tasks[next++];
          if (task) worker.send(task);
          else worker.disconnect();
        };
        worker.on('message', (result: RunResult) => {
          results.push(result);
          const wrong = result.checks.filter((check) => !check.correct);
          process.stdout.write(
            `  intensity ${result.intensity} seed ${result.seed}: ${wrong.length} wrong of ${result.checks.length} (${Math.round(result.wallMs)} ms)${wrong.length > 0 ? ` ${wrong.map((check) => `${check.path}=${check.value}@${check.confidence}`).join(' ')}` : ''}\n`,
          );
          send();
        });
        worker.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`a calibration child exited with ${code}`))));
        send();
      });
    }),
  );
  printTable(results, performance.now() - began);
}

function printTable(results: RunResult[], wallMs: number): void {
  console.log(
    `\n${new Date().toISOString().slice(0, 10)} · ${os.cpus()[0]?.model ?? 'unknown CPU'} × ${os.availableParallelism()} · Node ${process.version} · ${(wallMs / 1000).toFixed(0)} s wall`,
  );
  console.log(
    '| intensity | runs | values compared | differ from the truth | highest confidence of those | of those at ≥ 0.9 | right values at ≥ 0.9 | most often wrong |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---|');
  let failed = false;
  for (const intensity of options.intensities) {
    const runs = results.filter((result) => result.intensity === intensity);
    const checks = runs.flatMap((result) => result.checks);
    const wrong = checks.filter((check) => !check.correct);
    const sureWrong = wrong.filter((check) => check.confidence >= SURE_CONFIDENCE);
    const sureRight = checks.filter((check) => check.correct && check.confidence >= SURE_CONFIDENCE).length;
    const highest = wrong.length > 0 ? Math.max(...wrong.map((check) => check.confidence)).toFixed(3) : '–';
    const byPath = new Map<string, number>();
    for (const check of wrong) byPath.set(check.path, (byPath.get(check.path) ?? 0) + 1);
    const often = [...byPath.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([path, count]) => `${path} (${count})`)
      .join(', ');
    console.log(
      `| ${intensity} | ${runs.length} | ${checks.length} | ${wrong.length} | ${highest} | ${sureWrong.length} | ${sureRight} | ${often || '–'} |`,
    );
    if (sureWrong.length > 0 || (intensity === 0 && wrong.length > 0)) failed = true;
  }
  console.log(
    failed
      ? '\nNOT CALIBRATED: a value that differs from the truth carries confidence ≥ 0.9, or the idle GPU was not recovered'
      : '\ncalibrated: no value that differs from the truth carries confidence ≥ 0.9, and the idle GPU is recovered in full',
  );
  if (failed) process.exitCode = 1;
}

if (options.child) child();
else await parent();
