import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { errorFromData } from '../errors.js';
import { workerEntry, workerNiceIncrement } from '../paths.js';
import type { BackendRecipe } from '../gpu/backend-recipe.js';
import type { ProbeRunner, ProbeRunRequest } from './probe-runner.js';
import type { ProbeControlMessage, ProbeWorkerMessage, ProbeWorkerOutcome, ProbeWorkerTask } from './probe-worker.js';
import type { AnalysisProduct } from '../results/analysis-task.js';

export interface WorkerProbeRunnerOptions {
  recipe: BackendRecipe;
  /** Probes at once: one thread each (the scheduler's concurrency). */
  concurrency: number;
  logLevel: string;
  /** The threads' nice increment over the event loop's (TOPOD_WORKER_NICE); the probe process each spawns inherits it. */
  nice?: number;
}

/**
 * Runs each probe in a worker thread of its own (DESIGN.md: the event loop
 * only serves): the strategies, the simulated GPU and the analysis all run
 * there. One thread is started with the daemon, so the first probe does not
 * wait for one to load discovery.
 */
export class WorkerProbeRunner implements ProbeRunner {
  private readonly pool: Piscina<ProbeWorkerTask, ProbeWorkerOutcome>;

  constructor(private readonly options: WorkerProbeRunnerOptions) {
    this.pool = new Piscina({
      ...workerEntry(import.meta.url, 'probe-worker'),
      niceIncrement: workerNiceIncrement(options.nice),
      minThreads: 1,
      maxThreads: options.concurrency,
      // A probe holds its thread for seconds: never queue a second one behind it on the same thread.
      concurrentTasksPerWorker: 1,
      idleTimeout: 60_000,
    });
  }

  async run(request: ProbeRunRequest): Promise<AnalysisProduct> {
    const { port1, port2 } = new MessageChannel();
    const send = (message: ProbeControlMessage) => port1.postMessage(message);
    const onAbort = () => send({ type: 'abort' });
    request.signal.addEventListener('abort', onAbort, { once: true });
    port1.on('message', (message: ProbeWorkerMessage) => {
      if (message.type === 'progress') request.onProgress(message.phase, message.fraction);
      else if (message.type === 'opened') request.onOpened(message.pid);
      else
        request.afterMeasuring().then(
          (task) => send({ type: 'analyse', task }),
          () => send({ type: 'abort' }),
        );
    });
    try {
      const outcome = await this.pool.run(
        {
          recipe: this.options.recipe,
          gpu: request.gpu,
          only: request.only,
          jobId: request.jobId,
          logLevel: this.options.logLevel,
          port: port2,
        },
        { transferList: [port2] },
      );
      request.signal.throwIfAborted();
      if (!outcome.ok) throw errorFromData(outcome.error);
      return outcome.product;
    } finally {
      request.signal.removeEventListener('abort', onAbort);
      port1.close();
    }
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}
