/**
 * How to build the daemon's measurement backend again, as plain data: a probe
 * worker thread (server/jobs/probe-worker.ts) rebuilds the backend the daemon
 * selected from it, so the measurement and the simulator run off the event loop.
 */
import type { Logger } from 'pino';
import type { MeasurementBackend } from './backend.js';
import { withCarveoutPreference } from './carveout-profile.js';
import { NativeBackend } from './native.js';
import { SimulatedBackend } from './sim/index.js';

export type BackendRecipe =
  | { kind: 'native'; probePath: string | null; deadlineMs: number; env: Record<string, string>; carveoutPercent: number }
  | { kind: 'sim'; models: string[]; carveoutPercent: number };

export function backendFromRecipe(recipe: BackendRecipe, logger?: Logger): MeasurementBackend {
  const backend =
    recipe.kind === 'sim'
      ? new SimulatedBackend({ models: recipe.models })
      : new NativeBackend({
          deadlineMs: recipe.deadlineMs,
          env: { ...recipe.env },
          ...(recipe.probePath ? { probePath: recipe.probePath } : {}),
          ...(logger ? { logger } : {}),
        });
  return withCarveoutPreference(backend, recipe.carveoutPercent);
}
