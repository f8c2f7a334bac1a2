/** Errors of the dynamic-state layer, with stable codes (problem+json `type`). */

export class NvmlAddonLoadError extends Error {
  readonly code = 'TOPOD_ERR_NVML_ADDON_LOAD';
  /** One line per candidate binary that was tried, with why it failed. */
  readonly attempts: string[];

  constructor(attempts: string[], fix: string) {
    super(['the topod NVML addon could not be loaded:', ...attempts.map((a) => `  - ${a}`), fix].join('\n'));
    this.name = 'NvmlAddonLoadError';
    this.attempts = attempts;
  }
}
