/**
 * Who else uses a GPU, and whether that makes it too busy to measure. Pure
 * functions over one GpuActivity: the policy (wait, retry, fail) lives with
 * the job scheduler.
 */
import type { GpuActivity, GpuProcess } from './activity-types.js';

/** What topod itself runs, as it can name it. */
export interface OwnProcesses {
  /** PIDs of topod and of its probe children, as this process sees them (process.pid, child.pid). */
  pids: readonly number[];
  /**
   * How many of our probe processes hold a context on this GPU now: count a
   * probe once it has answered `hello` (its context exists); 0 before a probe starts.
   */
  probesOnGpu: number;
}

/** How our own processes were told apart from the tenants'. */
export type OwnMatch =
  /** No probe of ours on this GPU: topod holds no GPU context (NVML is not one), so every process is foreign. */
  | 'no-probe'
  /** NVML listed our PIDs (we share the host's PID namespace): exactly those were left out. */
  | 'pid'
  /** None of our PIDs listed (a container): as many processes as we run probes were left out. */
  | 'count';

export interface Tenants {
  /** Every entry of a foreign process (a PID may have a compute and a graphics entry). */
  processes: GpuProcess[];
  /** Distinct foreign PIDs. */
  pids: number[];
  /** Foreign PIDs with a compute entry, and those with only a graphics one. */
  computePids: number;
  graphicsOnlyPids: number;
  /** Device memory the foreign processes hold, each PID counted once (its largest figure). */
  memoryBytes: number;
  /** Foreign PIDs whose memory NVML could not attribute (not in memoryBytes). */
  unknownMemoryPids: number;
  ownMatchedBy: OwnMatch;
  /** A probe of ours runs here: GPU utilization is then ours and theirs together. */
  ownProbeRunning: boolean;
}

/** Each PID once, with the most memory any of its entries reports (null when none reports any). */
function memoryByPid(processes: readonly GpuProcess[]): Map<number, number | null> {
  const byPid = new Map<number, number | null>();
  for (const p of processes) {
    const seen = byPid.get(p.pid) ?? null;
    byPid.set(p.pid, p.usedMemoryBytes === null ? seen : Math.max(seen ?? 0, p.usedMemoryBytes));
  }
  return byPid;
}

/**
 * The processes on the GPU that are not ours.
 *
 * Before a probe starts, topod holds no context on the GPU, so every process
 * NVML lists is someone else's. While our probes run they are listed too,
 * and must not count. Where we share the host's PID namespace, NVML's PIDs
 * are ours and the match is exact. In a container NVML reports host PIDs,
 * which never equal the ones we see, and nothing in NVML ties a host PID to
 * us; but we know how many probes we run on this GPU, and each is one
 * compute process, so exactly that many compute processes are ours. Which
 * ones cannot be told: we leave out the ones holding the least memory, so
 * the tenants' memory is over- rather than under-counted. The count of
 * tenants is right either way, and the count is what makes a GPU busy.
 * A probe counts only once its context exists (`probesOnGpu`): a probe
 * still starting is not listed yet, and leaving out a process for it would
 * hide a real tenant.
 */
export function tenantsOf(activity: GpuActivity, own: OwnProcesses): Tenants {
  if (!Number.isInteger(own.probesOnGpu) || own.probesOnGpu < 0) {
    throw new RangeError(`probesOnGpu is a count of probes (an integer >= 0), not ${own.probesOnGpu}`);
  }
  const ownPids = new Set(own.pids);
  const listed = activity.processes;
  const matched = listed.some((p) => ownPids.has(p.pid));
  let ownMatchedBy: OwnMatch;
  let excluded: Set<number>;
  if (matched) {
    ownMatchedBy = 'pid';
    excluded = ownPids;
  } else if (own.probesOnGpu === 0) {
    ownMatchedBy = 'no-probe';
    excluded = new Set();
  } else {
    ownMatchedBy = 'count';
    const computeMemory = memoryByPid(listed.filter((p) => p.kind === 'compute'));
    const leastMemoryFirst = [...computeMemory.entries()].sort(
      ([pidA, a], [pidB, b]) => (a ?? Number.POSITIVE_INFINITY) - (b ?? Number.POSITIVE_INFINITY) || pidA - pidB,
    );
    excluded = new Set(leastMemoryFirst.slice(0, own.probesOnGpu).map(([pid]) => pid));
  }
  const processes = listed.filter((p) => !excluded.has(p.pid));
  const memory = memoryByPid(processes);
  const computePids = new Set(processes.filter((p) => p.kind === 'compute').map((p) => p.pid));
  const known = [...memory.values()].filter((bytes): bytes is number => bytes !== null);
  return {
    processes,
    pids: [...memory.keys()].sort((a, b) => a - b),
    computePids: computePids.size,
    graphicsOnlyPids: memory.size - computePids.size,
    memoryBytes: known.reduce((sum, bytes) => sum + bytes, 0),
    unknownMemoryPids: memory.size - known.length,
    ownMatchedBy,
    ownProbeRunning: own.probesOnGpu > 0 || matched,
  };
}

export interface BusyThresholds {
  /** Busy at or above this GPU utilization (the window's highest sample), percent. */
  utilizationPercent: number;
  /**
   * Busy when foreign processes hold at least this much device memory
   * together; a foreign process whose memory NVML cannot attribute counts as
   * busy whatever this says.
   */
  tenantMemoryBytes: number;
}

/**
 * 5 %: an idle GPU reads 0, and monitoring (nvidia-smi, DCGM) does not move
 * it; a tenant's kernels do. 64 MiB: any CUDA context holds hundreds of MiB
 * (about 500 on an H100), so every compute tenant is over it, while a
 * display server's few MiB on a workstation GPU is not.
 */
export const DEFAULT_BUSY_THRESHOLDS: Readonly<BusyThresholds> = Object.freeze({
  utilizationPercent: 5,
  tenantMemoryBytes: 64 * 1024 * 1024,
});

export interface BusyVerdict {
  busy: boolean;
  /** `gpu-busy: 1 compute process (2.0 GiB), 100 % utilization`, or `idle: …` with the same facts. */
  reason: string;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 'es'}`;
}

function size(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${Math.round(bytes / 2 ** 20)} MiB`;
}

function processFacts(activity: GpuActivity, tenants: Tenants): string {
  if (tenants.pids.length === 0) {
    return activity.processListsRead.compute ? 'no other process' : 'processes unreadable';
  }
  const kinds = [
    tenants.computePids > 0 ? plural(tenants.computePids, 'compute process') : null,
    tenants.graphicsOnlyPids > 0 ? plural(tenants.graphicsOnlyPids, 'graphics process') : null,
  ].filter((part): part is string => part !== null);
  const memory = [
    tenants.memoryBytes > 0 ? size(tenants.memoryBytes) : null,
    tenants.unknownMemoryPids > 0 ? `${tenants.unknownMemoryPids} unattributed` : null,
  ]
    .filter((part): part is string => part !== null)
    .join(', ');
  return `${kinds.join(' and ')}${memory ? ` (${memory})` : ''}`;
}

function utilizationFacts(activity: GpuActivity, tenants: Tenants): string | null {
  // While our probe runs, utilization is its and theirs together: not evidence of anyone else.
  if (tenants.ownProbeRunning) return null;
  if (!activity.utilization) return 'utilization unknown';
  return `${Math.round(activity.utilization.maxPercent)} % utilization`;
}

/** Whether the GPU is too busy to measure, with a reason naming what was seen. */
export function busyVerdict(activity: GpuActivity, tenants: Tenants, thresholds: BusyThresholds = DEFAULT_BUSY_THRESHOLDS): BusyVerdict {
  if (!(thresholds.utilizationPercent >= 0) || !(thresholds.tenantMemoryBytes >= 0)) {
    throw new RangeError(`busy thresholds must be >= 0: ${JSON.stringify(thresholds)}`);
  }
  const byProcesses = tenants.pids.length > 0 && (tenants.memoryBytes >= thresholds.tenantMemoryBytes || tenants.unknownMemoryPids > 0);
  const byUtilization =
    !tenants.ownProbeRunning && activity.utilization !== null && activity.utilization.maxPercent >= thresholds.utilizationPercent;
  const busy = byProcesses || byUtilization;
  const facts = [processFacts(activity, tenants), utilizationFacts(activity, tenants)].filter((fact): fact is string => fact !== null);
  return { busy, reason: `${busy ? 'gpu-busy' : 'idle'}: ${facts.join(', ')}` };
}
