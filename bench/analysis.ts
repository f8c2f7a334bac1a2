/**
 * `npm run bench:analysis` — the CPU time of analysing a full H100
 * discovery (issue 17.6): `reanalyse` over recorded raw series, no GPU.
 * Each full discovery (composed from the recordings under
 * test/fixtures/h100, test/unit/discovery/recorded-h100-runs.ts) is
 * re-analysed BENCH_ITERATIONS times (default 5) in a fresh process, each
 * time from a fresh copy of its series (parsed, then collected: the
 * series of a probe arrive over seconds), so the first analysis of each
 * process is a cold one, as the daemon's first probe is. Prints each strategy's build and the whole analysis: CPU ms (user +
 * system of the process, median and max over every analysis; "first" is the
 * median of the processes' first, cold analysis).
 */
import { fork } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { reanalyse, STRATEGIES } from '../server/discovery/index.js';
import { composedFullDiscoveries } from '../test/unit/discovery/recorded-h100-runs.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 5);
const TOTAL = 'total (reanalyse)';
const BESIDES = 'besides the builds';

/** One analysis: CPU ms per strategy build and for the whole of reanalyse. */
type Timings = Record<string, number>;

interface ChildReport {
  label: string;
  rawSeries: number;
  analyses: Timings[];
}

/** The child runs with --expose-gc. */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** In the child: times each strategy's build by wrapping it, then reanalyse as a whole. */
async function analyseInThisProcess(index: number): Promise<ChildReport> {
  const run = composedFullDiscoveries()[index];
  if (!run) throw new Error(`no composed full discovery ${index}`);
  let current: Timings = {};
  for (const strategy of STRATEGIES) {
    const build = strategy.build.bind(strategy);
    strategy.build = (raw, device, calibration) => {
      const start = process.cpuUsage();
      try {
        return build(raw, device, calibration);
      } finally {
        current[strategy.name] = (current[strategy.name] ?? 0) + cpuMsSince(start);
      }
    };
  }
  const analyses: Timings[] = [];
  for (let i = 0; i < ITERATIONS; i += 1) {
    // Fresh series objects each time, parsed as a stored probe is read back (structuredClone would give arrays of another, slower kind).
    const raw = JSON.parse(JSON.stringify(run.raw)) as typeof run.raw;
    // Collected first, as series that arrived during a probe would be: promoting the freshly parsed series is the parse's cost, not the analysis's.
    // The pause lets the collector's background sweeping finish, which would otherwise count as the first strategy's CPU time.
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 200));
    current = {};
    const start = process.cpuUsage();
    reanalyse(raw);
    current[TOTAL] = cpuMsSince(start);
    analyses.push(current);
  }
  return { label: run.label, rawSeries: run.raw.length, analyses };
}

function inFreshProcess(index: number): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['--child', String(index)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: [...process.execArgv, '--expose-gc'],
    });
    let report: ChildReport | undefined;
    child.on('message', (message) => (report = message as ChildReport));
    child.on('error', reject);
    child.on('exit', (code) =>
      report && code === 0 ? resolve(report) : reject(new Error(`the analysis process for run ${index} exited with ${code}`)),
    );
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const childAt = process.argv.indexOf('--child');
if (childAt >= 0) {
  process.send!(await analyseInThisProcess(Number(process.argv[childAt + 1])));
} else {
  const reports: ChildReport[] = [];
  for (let index = 0; index < composedFullDiscoveries().length; index += 1) reports.push(await inFreshProcess(index));

  console.log(
    `bench:analysis — reanalyse of ${reports.length} full H100 discoveries (recorded raw series, composed: test/unit/discovery/recorded-h100-runs.ts)`,
  );
  console.log(
    `machine: ${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()}, node ${process.version}`,
  );
  console.log(`runs:    ${ITERATIONS} analyses per discovery, one fresh process per discovery; CPU ms = user + system\n`);
  for (const report of reports) {
    console.log(
      `${report.label}: ${report.rawSeries} raw series; total CPU ms per analysis ${report.analyses.map((timings) => timings[TOTAL]!.toFixed(0)).join(' ')}`,
    );
  }
  console.log(`\n${'strategy'.padEnd(20)} ${'median ms'.padStart(10)} ${'max ms'.padStart(8)} ${'first ms'.padStart(9)}`);
  const all = reports.flatMap((report) => report.analyses);
  const firsts = reports.map((report) => report.analyses[0]!);
  // What reanalyse does besides the builds: merging them, miss penalties, plausibility checks.
  for (const timings of all)
    timings[BESIDES] = timings[TOTAL]! - STRATEGIES.reduce((sum, strategy) => sum + (timings[strategy.name] ?? 0), 0);
  for (const name of [...STRATEGIES.map((strategy) => strategy.name), BESIDES, TOTAL]) {
    const values = all.map((timings) => timings[name] ?? 0);
    const first = median(firsts.map((timings) => timings[name] ?? 0));
    console.log(
      `${name.padEnd(20)} ${median(values).toFixed(1).padStart(10)} ${Math.max(...values)
        .toFixed(1)
        .padStart(8)} ${first.toFixed(1).padStart(9)}`,
    );
  }
}
