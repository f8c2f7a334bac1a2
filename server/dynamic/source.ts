/** The daemon's DynamicSource: NVML through the native addon (which degrades to "unavailable" on its own). */
import { addonCandidates, loadNvmlAddon } from './nvml-addon.js';
import { NvmlSource, type DynamicLogger } from './nvml-source.js';
import type { DynamicSource } from './types.js';

/** The soname the dynamic linker resolves: the system's libnvidia-ml. */
export const SYSTEM_NVML_LIBRARY = 'libnvidia-ml.so.1';

export interface DynamicSourceOptions {
  /** Config `nvmlLib` (TOPOD_NVML_LIB): a libnvidia-ml to load instead of the system's. */
  libraryPath: string | null;
  /** Config `nvmlAddon` (TOPOD_NVML_ADDON): a topod_nvml.node to try before the built ones. */
  addonPath: string | null;
  logger?: DynamicLogger;
}

export function createDynamicSource(options: DynamicSourceOptions): DynamicSource {
  return new NvmlSource({
    // Always a path: given none, the addon would read TOPOD_NVML_LIB itself
    // (for its use outside the daemon); in the daemon, config decides.
    libraryPath: options.libraryPath ?? SYSTEM_NVML_LIBRARY,
    addon: () => loadNvmlAddon(addonCandidates(options.addonPath)),
    logger: options.logger,
  });
}
