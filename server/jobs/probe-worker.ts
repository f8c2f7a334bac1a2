/**
 * A probe worker thread's entry (piscina): opens the daemon's backend (rebuilt
 * from its recipe), measures with server/discovery, and analyses the series
 * where they are, so nothing of a probe but its progress and its built result
 * crosses to the event loop. Talks to the scheduler over `port`: progress,
 * the probe's pid and "measured" out; "analyse" (with the result's meta) and
 * "abort" in.
 */
import type { MessagePort } from 'node:worker_threads';
import pino, { type Logger } from 'pino';
import { DISCOVERY } from '../discovery/index.js';
import { errorToData, type ErrorData } from '../errors.js';
import { backendFromRecipe, type BackendRecipe } from '../gpu/backend-recipe.js';
import type { MeasurementBackend } from '../gpu/backend.js';
import type { ProbeTarget } from '../model/document.js';
import type { GpuIdentity } from '../model/gpu.js';
import { analyseTask, type AnalysisProduct, type AnalysisTask } from '../results/analysis-task.js';
import { inProcessProbeRunner } from './probe-runner.js';

export interface ProbeWorkerTask {
  recipe: BackendRecipe;
  gpu: GpuIdentity;
  only: ProbeTarget[] | null;
  jobId: string;
  logLevel: string;
  port: MessagePort;
}

/** What the worker posts on the port. */
export type ProbeWorkerMessage =
  | { type: 'opened'; pid: number | undefined }
  | { type: 'progress'; phase: string; fraction: number }
  | { type: 'measured' };

/** What the scheduler posts back. */
export type ProbeControlMessage = { type: 'analyse'; task: Omit<AnalysisTask, 'measurement'> } | { type: 'abort' };

/** A failure as plain data: an Error's own fields (`code` above all) do not survive the trip between threads. */
export type ProbeWorkerOutcome = { ok: true; product: AnalysisProduct } | { ok: false; error: ErrorData };

/** One backend per recipe and thread: a simulated GPU's seeds and a native probe's launch are set up once. */
const backends = new Map<string, MeasurementBackend>();
let logger: Logger | null = null;

function backendFor(recipe: BackendRecipe, level: string): MeasurementBackend {
  logger ??= pino({ level, base: { thread: 'probe-worker' } });
  const key = JSON.stringify(recipe);
  let backend = backends.get(key);
  if (!backend) {
    backend = backendFromRecipe(recipe, logger);
    backends.set(key, backend);
  }
  return backend;
}

export default async function probe(task: ProbeWorkerTask): Promise<ProbeWorkerOutcome> {
  const { port } = task;
  const abort = new AbortController();
  let analyse: (task: Omit<AnalysisTask, 'measurement'>) => void = () => undefined;
  const analysisTask = new Promise<Omit<AnalysisTask, 'measurement'>>((resolve, reject) => {
    analyse = resolve;
    abort.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
  });
  analysisTask.catch(() => undefined);
  port.on('message', (message: ProbeControlMessage) => {
    if (message.type === 'abort') abort.abort(new Error('aborted by the daemon'));
    else analyse(message.task);
  });
  const post = (message: ProbeWorkerMessage) => port.postMessage(message);
  try {
    // The same steps as a test's in-process probe; here the callbacks cross the port.
    const runner = inProcessProbeRunner(backendFor(task.recipe, task.logLevel), DISCOVERY.discover, async (analysis) =>
      analyseTask(analysis, DISCOVERY),
    );
    const product = await runner.run({
      jobId: task.jobId,
      gpu: task.gpu,
      only: task.only,
      signal: abort.signal,
      logger: (logger as Logger).child({ jobId: task.jobId }),
      onProgress: (phase, fraction) => post({ type: 'progress', phase, fraction }),
      onOpened: (pid) => post({ type: 'opened', pid }),
      afterMeasuring: () => {
        post({ type: 'measured' });
        return analysisTask;
      },
    });
    return { ok: true, product };
  } catch (error) {
    return { ok: false, error: errorToData(error) };
  } finally {
    port.close();
  }
}
