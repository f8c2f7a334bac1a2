import type { Logger } from 'pino';
import type { BackendChoice, Config } from '../config.js';
import type { MeasurementBackend } from './backend.js';
import { NativeBackend } from './native.js';
import { SimulatedBackend } from './sim/index.js';

export type BackendSelection = { backend: MeasurementBackend; reason: string } | { backend: null; reason: string };

/**
 * `auto`: the native probe when it runs and sees a GPU, otherwise no backend
 * (the daemon still serves, and says why). `native` / `sim`: as asked.
 */
export async function selectBackend(options: {
  choice: BackendChoice;
  simModels: string[];
  probePath: string | null;
  /** Config's probeDeadlineMs and probeEnv: what every probe process is started with. */
  probeDeadlineMs: number;
  probeEnv: Readonly<Record<string, string>>;
  logger: Logger;
}): Promise<BackendSelection> {
  const { choice, logger } = options;
  if (choice === 'sim') {
    return {
      backend: new SimulatedBackend({ models: options.simModels }),
      reason: `simulated GPU (${options.simModels.join(', ')}) as configured`,
    };
  }
  const nativeOptions = {
    logger,
    deadlineMs: options.probeDeadlineMs,
    env: { ...options.probeEnv },
    ...(options.probePath ? { probePath: options.probePath } : {}),
  };
  const check = await NativeBackend.available(nativeOptions);
  if (check.ok) return { backend: new NativeBackend(nativeOptions), reason: 'native probe' };
  const reason =
    choice === 'native'
      ? `TOPOD_BACKEND=native but the native probe cannot run: ${check.reason}`
      : `no GPU measurement backend: ${check.reason} (set TOPOD_BACKEND=sim for a simulated GPU)`;
  return { backend: null, reason };
}

/** selectBackend with the configuration's settings. */
export function selectConfiguredBackend(
  config: Pick<Config, 'backend' | 'simModels' | 'probePath' | 'probeDeadlineMs' | 'probeEnv'>,
  logger: Logger,
): Promise<BackendSelection> {
  return selectBackend({
    choice: config.backend,
    simModels: config.simModels,
    probePath: config.probePath,
    probeDeadlineMs: config.probeDeadlineMs,
    probeEnv: config.probeEnv,
    logger,
  });
}
