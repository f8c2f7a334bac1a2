import type { Logger } from 'pino';
import type { ResultReanalyser } from '../jobs/reanalyser.js';
import type { GpuIdentity } from '../model/gpu.js';
import type { ResultStore, StoredResult } from '../store/results.js';

/** Which result a GPU serves and whether it must be measured (again). */
export interface ServedResult {
  result: StoredResult | null;
  /** Why the served result is not for the current key; null when it is current (or there is none). */
  staleReason: string | null;
}

export type ProbeReason = 'first-probe' | 'driver-changed' | 'probe-version-changed';

export interface ProbePolicyOptions {
  results: ResultStore;
  /** null without a measurement backend: nothing is current, nothing is queued. */
  probeVersion: string | null;
  /** null without a backend too; re-analysis needs no GPU but belongs with the analysis the backend's jobs use. */
  reanalyser: ResultReanalyser | null;
  logger: Logger;
}

/**
 * Probe once per (GPU UUID, canonical driver version, probe version), and
 * re-analyse — never re-measure — when only the analysis is newer.
 */
export class ProbePolicy {
  constructor(private readonly options: ProbePolicyOptions) {}

  /** The result to serve: the newest for the current key, else the newest of any key (stale); re-analysed first when outdated. */
  select(identity: GpuIdentity): ServedResult {
    const { results, probeVersion } = this.options;
    const fresh = probeVersion ? results.latestFor({ gpuUuid: identity.uuid, driverVersion: identity.driverVersion, probeVersion }) : null;
    const found = fresh ?? results.latestForGpu(identity.uuid);
    const result = found ? this.upToDateAnalysis(found) : null;
    return { result, staleReason: fresh || !result ? null : staleness(result, identity, probeVersion) };
  }

  /** After a probe succeeded: the new result is current unless the driver changed while it ran. */
  afterProbe(identity: GpuIdentity, result: StoredResult): ServedResult {
    return { result, staleReason: identity.driverVersion === result.driverVersion ? null : staleness(result, identity, result.probeVersion) };
  }

  /** Why a probe must be queued for this GPU, or null when its served result is current. */
  probeReason(identity: GpuIdentity, served: ServedResult): ProbeReason | null {
    if (!this.options.probeVersion) return null;
    if (!served.result) return 'first-probe';
    if (served.staleReason === null) return null;
    return served.result.driverVersion !== identity.driverVersion ? 'driver-changed' : 'probe-version-changed';
  }

  /** An admin's re-analysis: rebuild the served result with the current analysis, whatever its version. */
  reanalyse(result: StoredResult): StoredResult {
    const reanalyser = this.options.reanalyser;
    if (!reanalyser) throw new Error('no analysis is configured');
    return reanalyser.rebuild(result);
  }

  get canReanalyse(): boolean {
    return this.options.reanalyser !== null;
  }

  private upToDateAnalysis(result: StoredResult): StoredResult {
    const reanalyser = this.options.reanalyser;
    if (!reanalyser?.isOutdated(result)) return result;
    try {
      return reanalyser.rebuild(result);
    } catch (error) {
      this.options.logger.warn({ err: error, resultId: result.id, gpu: result.gpuUuid }, 're-analysing a stored result failed; serving it as stored');
      return result;
    }
  }
}

export function staleness(result: StoredResult, identity: GpuIdentity, probeVersion: string | null | undefined): string {
  if (result.driverVersion !== identity.driverVersion) return `driver changed from ${result.driverVersion} to ${identity.driverVersion}`;
  if (probeVersion && result.probeVersion !== probeVersion) return `probe changed from ${result.probeVersion} to ${probeVersion}`;
  return 'result is for another configuration';
}
