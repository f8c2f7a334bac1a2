/** The daemon's DynamicSource: NVML through the native addon (which degrades to "unavailable" on its own). */
import { NvmlSource, type DynamicLogger } from './nvml-source.js';
import type { DynamicSource } from './types.js';

export interface DynamicSourceOptions {
  /** Config `nvmlLib` (TOPOD_NVML_LIB): a libnvidia-ml to load instead of the system's. */
  libraryPath: string | null;
  logger?: DynamicLogger;
}

export function createDynamicSource(options: DynamicSourceOptions): DynamicSource {
  return new NvmlSource({ libraryPath: options.libraryPath, logger: options.logger });
}
