import type { GpcLayout } from '../../model/compute-schema.js';

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

/** The largest cluster each SM ran in over these launches. */
function largestClusterOfSm(placements: readonly Placement[]): Map<number, number> {
  const largest = new Map<number, number>();
  for (const { clusterSize, smIds } of placements) {
    for (let b = 0; b + clusterSize <= smIds.length; b += 1) {
      const sm = smIds[b]!;
      largest.set(sm, Math.max(largest.get(sm) ?? 0, clusterSize));
    }
  }
  return largest;
}

/**
 * TPCs from the clusters of two blocks: where the scheduler always puts both
 * blocks of such a cluster on the same two SMs (every SM always with the same
 * partner, in every launch), those two SMs are one TPC. null when some SM had
 * two partners (the placements do not tell TPCs apart) or no such launch ran.
 */
export function tpcsFromPairs(placements: readonly Placement[]): number[][] | null {
  const partner = new Map<number, number>();
  let pairs = 0;
  for (const { clusterSize, smIds } of placements) {
    if (clusterSize !== 2) continue;
    for (let b = 0; b + 2 <= smIds.length; b += 2) {
      const [x, y] = [smIds[b]!, smIds[b + 1]!];
      if (x === y || (partner.get(x) ?? y) !== y || (partner.get(y) ?? x) !== x) return null;
      partner.set(x, y).set(y, x);
      pairs += 1;
    }
  }
  if (pairs === 0) return null;
  return [...partner]
    .filter(([x, y]) => x < y)
    .map(([x, y]) => [x, y])
    .sort((a, b) => a[0]! - b[0]!);
}

/**
 * Clusters each SM group holds at once, one block per SM: ⌊SMs / size⌋ per
 * group, summed. Where this equals cudaOccupancyMaxActiveClusters for every
 * size, the map explains the runtime's own occupancy figures.
 */
export function clustersTheMapHolds(groups: readonly (readonly number[])[], clusterSize: number): number {
  return groups.reduce((sum, g) => sum + Math.floor(g.length / clusterSize), 0);
}

/**
 * The layout from rounds of placements (each round: a launch of every
 * cluster size): the map all rounds give together, and as confidence the
 * share of rounds that alone give that same map. `smIds` are the SMs of the
 * device (a plain launch's census); those no cluster ran on are listed
 * unplaced. A group whose SMs never ran a cluster of more than two blocks is
 * one TPC the scheduler keeps out of larger clusters: which GPC holds it is
 * not told, so it is listed apart rather than counted as a GPC.
 * `activeClusters[size - 1]` (cudaOccupancyMaxActiveClusters), when given,
 * is checked against what the map holds.
 */
export function gpcLayout(
  rounds: ReadonlyArray<readonly Placement[]>,
  smIds: readonly number[],
  note: string,
  activeClusters: readonly number[] = [],
): GpcLayout {
  const placements = rounds.flat();
  const all = groupsFromPlacements(placements);
  const agreeing = rounds.filter((round) => sameGroups(groupsFromPlacements(round), all)).length;
  const confidence = rounds.length > 0 ? agreeing / rounds.length : 0;
  const largest = largestClusterOfSm(placements);
  const pairOnly = (group: readonly number[]) => group.length <= 2 && group.every((sm) => (largest.get(sm) ?? 0) <= 2);
  const gpcs = all.filter((g) => !pairOnly(g));
  const placed = new Set(all.flat());
  const sizes = activeClusters.map((active, i) => ({ size: i + 1, active })).filter(({ size }) => size >= 2);
  const matching = sizes.filter(({ size, active }) => clustersTheMapHolds(all, size) === active).length;
  return {
    count: { value: gpcs.length, unit: 'count', source: 'microbenchmark', confidence },
    smsPerGpc: gpcs.map((g) => g.length),
    smIds: gpcs,
    tpcsOfUnknownGpc: all.filter(pairOnly),
    tpcs: tpcsFromPairs(placements),
    unplacedSmIds: smIds.filter((sm) => !placed.has(sm)),
    occupancyAgreement: sizes.length > 0 ? matching / sizes.length : null,
    confidence,
    source: 'microbenchmark',
    note,
  };
}
