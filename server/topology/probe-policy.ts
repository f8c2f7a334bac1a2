import type { GpuIdentity } from '../model/gpu.js';
import type { ResultStore, StoredResult } from '../store/results.js';

/** Which result a GPU serves and whether it must be measured (again). */
export interface ServedResult {
  result: StoredResult | null;
  /** Why the served result is not for the current key; null when it is current (or there is none). */
  staleReason: string | null;
  /** Built by an older analysis (or document schema): served as it is while start-up re-analyses it. */
  outdated: boolean;
}

export type ProbeReason = 'first-probe' | 'driver-changed' | 'probe-version-changed';

export interface ProbePolicyOptions {
  results: ResultStore;
  /** null without a measurement backend: nothing is current, nothing is queued. */
  probeVersion: string | null;
  /** Whether a result was built by an older analysis; null without a backend (no analysis to rebuild it with). */
  isOutdated: ((result: StoredResult) => boolean) | null;
}

/**
 * Probe once per (GPU UUID, canonical driver version, probe version), and
 * re-analyse — never re-measure — when only the analysis is newer. Reads
 * only: the re-analysis itself is start-up's (TopologyService.reanalyseOutdated).
 */
export class ProbePolicy {
  constructor(private readonly options: ProbePolicyOptions) {}

  /** The result to serve: the newest for the current key, else the newest of any key (stale). */
  select(identity: GpuIdentity): ServedResult {
    const { results, probeVersion } = this.options;
    const fresh = probeVersion ? results.latestFor({ gpuUuid: identity.uuid, driverVersion: identity.driverVersion, probeVersion }) : null;
    const result = fresh ?? results.latestForGpu(identity.uuid);
    return this.served(result, fresh || !result ? null : staleness(result, identity, probeVersion));
  }

  /** After a probe succeeded or a re-analysis: the new result is current unless the driver changed meanwhile. */
  afterProbe(identity: GpuIdentity, result: StoredResult): ServedResult {
    return this.served(result, identity.driverVersion === result.driverVersion ? null : staleness(result, identity, result.probeVersion));
  }

  private served(result: StoredResult | null, staleReason: string | null): ServedResult {
    return { result, staleReason, outdated: result !== null && (this.options.isOutdated?.(result) ?? false) };
  }

  /** Why a probe must be queued for this GPU, or null when its served result is current. */
  probeReason(identity: GpuIdentity, served: ServedResult): ProbeReason | null {
    if (!this.options.probeVersion) return null;
    if (!served.result) return 'first-probe';
    if (served.staleReason === null) return null;
    return served.result.driverVersion !== identity.driverVersion ? 'driver-changed' : 'probe-version-changed';
  }
}

export function staleness(result: StoredResult, identity: GpuIdentity, probeVersion: string | null | undefined): string {
  if (result.driverVersion !== identity.driverVersion) return `driver changed from ${result.driverVersion} to ${identity.driverVersion}`;
  if (probeVersion && result.probeVersion !== probeVersion) return `probe changed from ${result.probeVersion} to ${probeVersion}`;
  return 'result is for another configuration';
}
