import type { ComputeTopology, GpcLayout } from '../model/compute-schema.js';

/**
 * The GPC map from cluster placements (thread-block-cluster paper §III-A1,
 * §V-A1): blocks of one cluster always run on SMs of one GPC, so every
 * cluster of every launch joins its SMs; SMs that never share a cluster end
 * in different groups. Pure: the strategy's build and its tests call it.
 */

/** One launch's placement: block b ran on smIds[b]; blocks b with the same floor(b / clusterSize) formed one cluster. */
export interface Placement {
  clusterSize: number;
  smIds: readonly number[];
}

/** Union-find over SM ids. */
class Groups {
  private readonly parent = new Map<number, number>();

  find(x: number): number {
    let root = x;
    while ((this.parent.get(root) ?? root) !== root) root = this.parent.get(root)!;
    let node = x;
    while (node !== root) {
      const next = this.parent.get(node) ?? node;
      this.parent.set(node, root);
      node = next;
    }
    if (!this.parent.has(root)) this.parent.set(root, root);
    return root;
  }

  join(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent.set(Math.max(ra, rb), Math.min(ra, rb));
  }

  /** Every group, each ascending, ordered by its lowest SM id. */
  groups(): number[][] {
    const byRoot = new Map<number, number[]>();
    for (const x of this.parent.keys()) {
      const root = this.find(x);
      byRoot.set(root, [...(byRoot.get(root) ?? []), x]);
    }
    return [...byRoot.values()].map((g) => g.sort((a, b) => a - b)).sort((a, b) => a[0]! - b[0]!);
  }
}

/** The SM groups the clusters of these launches imply. */
export function groupsFromPlacements(placements: readonly Placement[]): number[][] {
  const groups = new Groups();
  for (const { clusterSize, smIds } of placements) {
    for (let start = 0; start + clusterSize <= smIds.length; start += clusterSize) {
      for (let k = start; k < start + clusterSize; k += 1) groups.join(smIds[start]!, smIds[k]!);
    }
  }
  return groups.groups();
}

const sameGroups = (a: number[][], b: number[][]) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The layout from rounds of placements (each round: a launch of every
 * cluster size): the map all rounds give together, and as confidence the
 * share of rounds that alone give that same map. `smIds` are the SMs of the
 * device (a plain launch's census); those no cluster ran on are listed unplaced.
 */
export function gpcLayout(rounds: ReadonlyArray<readonly Placement[]>, smIds: readonly number[], note: string): GpcLayout {
  const all = groupsFromPlacements(rounds.flat());
  const agreeing = rounds.filter((round) => sameGroups(groupsFromPlacements(round), all)).length;
  const placed = new Set(all.flat());
  return {
    count: { value: all.length, unit: 'count', source: 'microbenchmark', confidence: rounds.length > 0 ? agreeing / rounds.length : 0 },
    smsPerGpc: all.map((g) => g.length),
    smIds: all,
    unplacedSmIds: smIds.filter((sm) => !placed.has(sm)),
    confidence: rounds.length > 0 ? agreeing / rounds.length : 0,
    source: 'microbenchmark',
    note,
  };
}

/** What a MIG GPU instance of a profile can launch, derived (not measured) from the parent's compute section. */
export interface MigClusterShare {
  gpcCount: number;
  smsPerGpc: number;
  largestCluster: number;
  source: 'derived';
}

/**
 * A GPU instance's GPC share from its profile: MIG gives each compute slice
 * (the "N" of an "Ng" profile) SMs of one GPC, so the instance has
 * `computeSlices` GPCs of about smCount / computeSlices SMs each (never more
 * than the parent's largest GPC), and the largest cluster it can launch is
 * that, capped by the parent's largest cluster. null when the parent has no
 * measured GPC map or no clusters. NVML does not say which SMs an instance
 * holds, so this is `derived`.
 */
export function migClusterShare(parent: ComputeTopology, instance: { smCount: number; computeSlices: number }): MigClusterShare | null {
  const maxCluster = parent.clusters.maxClusterSize?.value;
  if (!parent.gpcs || !parent.clusters.supported || maxCluster === undefined || instance.computeSlices < 1) return null;
  const largestGpc = Math.max(...parent.gpcs.smsPerGpc);
  const smsPerGpc = Math.min(largestGpc, Math.floor(instance.smCount / instance.computeSlices));
  return { gpcCount: instance.computeSlices, smsPerGpc, largestCluster: Math.min(maxCluster, smsPerGpc), source: 'derived' };
}
