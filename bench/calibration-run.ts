/**
 * One seeded discovery on the simulated GPU with a tenant at a given
 * intensity, held against the model's truth: what `npm run
 * bench:calibration` runs many of and test/unit/sim/calibration.test.ts a few.
 */
import { discover, reanalyse, STRATEGIES } from '../server/discovery/index.js';
import { ProbeSession } from '../server/discovery/probe-session.js';
import type { ProbeChannel } from '../server/gpu/backend.js';
import { modelById, SimulatedBackend } from '../server/gpu/sim/index.js';
import { checkAgainstModel, type TruthCheck } from '../server/gpu/sim/truth.js';
import type { DiscoveryOutcome } from '../server/model/document.js';

/** A value this sure must be right (issue 17 item 3). */
export const SURE_CONFIDENCE = 0.9;
/**
 * The strategies interference changes most, and the cheap ones: the L1's
 * size, line and granularity walks, the L2's, and bandwidth (a full
 * simulated discovery takes 15–60 s of JavaScript under interference).
 */
export const CALIBRATION_STRATEGIES: readonly string[] = ['l1', 'l2', 'bandwidth'];

export interface CalibrationTask {
  modelId: string;
  seed: number;
  intensity: number;
  /** Strategy names; null for a full discovery. */
  strategies: readonly string[] | null;
  /** The simulated GPU computes on a thread of its own (SimulatedBackendOptions.thread). */
  thread?: boolean;
}

export interface CalibrationRun {
  checks: TruthCheck[];
  wallMs: number;
  warnings: string[];
}

export async function calibrationRun(task: CalibrationTask): Promise<CalibrationRun> {
  const model = modelById(task.modelId);
  if (!model) throw new Error(`unknown simulated model ${task.modelId}`);
  const unknown = task.strategies?.filter((name) => !STRATEGIES.some((strategy) => strategy.name === name)) ?? [];
  if (unknown.length > 0)
    throw new Error(`unknown strategies ${unknown.join(', ')} (known: ${STRATEGIES.map((strategy) => strategy.name).join(', ')})`);
  const backend = new SimulatedBackend({ models: [model.id], seed: task.seed, interference: task.intensity, thread: task.thread ?? false });
  const [gpu] = await backend.listDevices();
  const channel = await backend.open(gpu!);
  const started = performance.now();
  try {
    const outcome = await discoverWith(channel, task.strategies);
    return { checks: checkAgainstModel(outcome, model), wallMs: performance.now() - started, warnings: outcome.warnings };
  } finally {
    await channel.close();
  }
}

/** discover() restricted to some strategies: hello, calibrate, the strategies in registry order, then reanalyse() as discover() ends. */
async function discoverWith(channel: ProbeChannel, strategies: readonly string[] | null): Promise<DiscoveryOutcome> {
  if (strategies === null) return discover(channel, {});
  const session = new ProbeSession(channel, undefined, undefined);
  const hello = await session.request('hello', 'hello', {});
  await session.request('calibrate', 'calibrate', { samples: 1024 });
  for (const strategy of STRATEGIES.filter((candidate) => strategies.includes(candidate.name)))
    await strategy.measure(session, hello.devices[0]!);
  return reanalyse(session.raw);
}
