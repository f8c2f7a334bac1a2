/** Errors of the dynamic-state layer, with stable codes (server/errors.ts). */
import { ERROR_CODES } from '../errors.js';

export class NvmlAddonLoadError extends Error {
  readonly code = ERROR_CODES.NVML_ADDON_LOAD;
  /** One line per candidate binary that was tried, with why it failed. */
  readonly attempts: string[];

  constructor(attempts: string[], fix: string) {
    super(['the topod NVML addon could not be loaded:', ...attempts.map((a) => `  - ${a}`), fix].join('\n'));
    this.name = 'NvmlAddonLoadError';
    this.attempts = attempts;
  }
}
