/**
 * Where a probe is measured and analysed. The daemon's own backends run in a
 * probe worker thread (worker-probe-runner.ts), so neither the strategies'
 * decisions between rounds, nor the simulator, nor the analysis ever hold the
 * event loop; a backend a test injects runs here, in-process, the same steps.
 */
import type { Logger } from 'pino';
import type { Discovery } from '../discovery/contract.js';
import type { MeasurementBackend } from '../gpu/backend.js';
import type { ProbeTarget } from '../model/document.js';
import type { GpuIdentity } from '../model/gpu.js';
import type { AnalysisProduct, AnalysisTask } from '../results/analysis-task.js';

export interface ProbeRunRequest {
  jobId: string;
  gpu: GpuIdentity;
  only: ProbeTarget[] | null;
  /** Aborts the measurement and the analysis (a cancelled, timed-out or interfered job). */
  signal: AbortSignal;
  logger: Logger;
  onProgress(phase: string, fraction: number): void;
  /** The probe is open on the GPU; `pid`: its process, when one runs (a simulated GPU has none). */
  onOpened(pid: number | undefined): void;
  /** The measurement ended: the caller says what to analyse it with (the result's meta, conditions and stored series). */
  afterMeasuring(): Promise<Omit<AnalysisTask, 'measurement'>>;
}

export interface ProbeRunner {
  run(request: ProbeRunRequest): Promise<AnalysisProduct>;
  close(): Promise<void>;
}

/** Measures on the caller's thread through `backend`, then analyses with `analyse` (the lifecycle's executor). */
export function inProcessProbeRunner(
  backend: MeasurementBackend,
  discover: Discovery['discover'],
  analyse: (task: AnalysisTask, signal: AbortSignal) => Promise<AnalysisProduct>,
): ProbeRunner {
  return {
    async run(request) {
      const channel = await backend.open(request.gpu);
      try {
        request.onOpened((channel as { pid?: number }).pid);
        const measurement = await discover(channel, {
          only: request.only,
          signal: request.signal,
          onProgress: request.onProgress,
          logger: request.logger,
        });
        request.signal.throwIfAborted();
        return await analyse({ ...(await request.afterMeasuring()), measurement }, request.signal);
      } finally {
        await channel.close().catch((error: unknown) => request.logger.warn({ err: error }, 'closing the probe channel failed'));
      }
    },
    close: async () => undefined,
  };
}
