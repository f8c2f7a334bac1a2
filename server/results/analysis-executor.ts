import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { workerEntry, workerNiceIncrement } from '../paths.js';
import type { Discovery } from '../discovery/contract.js';
import { analyseTask, type AnalysisProduct, type AnalysisTask } from './analysis-task.js';

/** Where results are analysed: worker threads for the daemon's discovery, the calling thread for a test's fake. */
export interface AnalysisExecutor {
  run(task: AnalysisTask, signal?: AbortSignal): Promise<AnalysisProduct>;
  close(): Promise<void>;
}

export interface WorkerPoolOptions {
  /** At most this many analyses at once (default: one core fewer than the machine has, 1 to 4). */
  maxThreads?: number;
  /** An idle worker beyond the first is stopped after this long. */
  idleTimeoutMs?: number;
  /** The threads' nice increment over the event loop's (TOPOD_WORKER_NICE). */
  nice?: number;
}

/** What the executor needs of a discovery: its pure analysis, and whether workers may run it. */
export type AnalysingDiscovery = Pick<Discovery, 'reanalyse' | 'carryOverRaw' | 'analysedInWorkers'>;

/** Runs in worker threads for server/discovery's own analysis; in-process otherwise (fakes). */
export function createAnalysisExecutor(discovery: AnalysingDiscovery, options: WorkerPoolOptions = {}): AnalysisExecutor {
  return discovery.analysedInWorkers ? new WorkerPoolAnalysis(options) : inProcessAnalysis(discovery);
}

function inProcessAnalysis(discovery: AnalysingDiscovery): AnalysisExecutor {
  return {
    run: async (task, signal) => {
      signal?.throwIfAborted();
      return analyseTask(task, discovery);
    },
    close: async () => undefined,
  };
}

class WorkerPoolAnalysis implements AnalysisExecutor {
  private readonly pool: Piscina<AnalysisTask, AnalysisProduct>;

  constructor(options: WorkerPoolOptions) {
    const maxThreads = options.maxThreads ?? Math.max(1, Math.min(4, availableParallelism() - 1));
    this.pool = new Piscina({
      ...workerEntry(import.meta.url, 'analysis-worker'),
      niceIncrement: workerNiceIncrement(options.nice),
      // Started when a re-analysis asks for one: the daemon's probes analyse in their own worker (server/jobs/probe-worker.ts).
      minThreads: 0,
      maxThreads,
      idleTimeout: options.idleTimeoutMs ?? 60_000,
    });
  }

  run(task: AnalysisTask, signal?: AbortSignal): Promise<AnalysisProduct> {
    return this.pool.run(task, signal ? { signal } : {});
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}
