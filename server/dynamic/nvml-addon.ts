/**
 * Finds and loads native/nvml's topod_nvml.node. Every candidate is tried;
 * when none loads, one error lists each path with its cause and says how to
 * build it. Loading the addon never touches NVML itself: the addon dlopens
 * libnvidia-ml only when asked to read.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { projectRoot } from '../paths.js';
import { NvmlAddonLoadError } from './errors.js';
import type { NvmlAddon } from './nvml-raw.js';

const ADDON_FILE = 'topod_nvml.node';
const FIX = 'Build it with `npm run build:native` (needs g++, make and python3), or set TOPOD_NVML_ADDON to a built topod_nvml.node.';

/** Where to look, in order: `override` (config's TOPOD_NVML_ADDON) first, then the package's own builds. */
export function addonCandidates(override: string | null = null): string[] {
  const root = projectRoot();
  const candidates = [
    override,
    path.join(root, 'native/nvml/build/Release', ADDON_FILE),
    path.join(root, 'native/nvml/build/Debug', ADDON_FILE),
  ];
  return candidates.filter((c): c is string => typeof c === 'string' && c.length > 0);
}

function isAddon(value: unknown): value is NvmlAddon {
  const v = value as Partial<Record<keyof NvmlAddon, unknown>> | null;
  return (
    !!v && typeof v.read === 'function' && typeof v.open === 'function' && typeof v.close === 'function' && typeof v.status === 'function'
  );
}

let cached: NvmlAddon | null = null;

/** Loads the addon once per process; throws NvmlAddonLoadError listing every attempt. */
export function loadNvmlAddon(candidates: string[] = addonCandidates()): NvmlAddon {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const attempts: string[] = [];
  if (candidates.length === 0) attempts.push('no candidate path (package root not found and TOPOD_NVML_ADDON unset)');
  for (const candidate of candidates) {
    if (!existsSync(candidate)) {
      attempts.push(`${candidate}: not found`);
      continue;
    }
    try {
      const loaded: unknown = require(candidate);
      if (!isAddon(loaded)) {
        attempts.push(`${candidate}: loaded, but it is not the topod NVML addon (missing read/open/close/status)`);
        continue;
      }
      cached = loaded;
      return loaded;
    } catch (error) {
      attempts.push(`${candidate}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  throw new NvmlAddonLoadError(attempts, FIX);
}
