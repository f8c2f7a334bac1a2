import {
  classifyReRead,
  countCaches,
  decideSharing,
  referenceOf,
  type PlacementTest,
  type ReReadReference,
  type ReReadVerdict,
} from '../../analysis/sharing.js';
import type { ChaserSpec, DeviceProperties, PchaseArgs, PchasePairArgs, PchasePairResult, PchaseResult } from '../../protocol/ops.js';
import { ELEMENT_NAMES, type ElementName, type ElementTopology, type RawSeries } from '../../model/document.js';
import { CONSTANT_SPEC } from './constant.js';
import { L1_SPEC, READ_ONLY_SPEC, TEXTURE_SPEC } from './l1.js';
import { nextLevelSamples, type PerSmCacheSpec } from './per-sm-cache.js';
import type { ProbeSession } from '../probe-session.js';
import { seriesUnder, type Strategy, type StrategyBuild } from '../strategy.js';
import { recordedSearch, residentSamples } from '../sweep-series.js';

/**
 * How many of each per-SM cache an SM has, and which of them are one
 * physical cache (thesis §4.5–4.6; MT4G §IV-F, §IV-G), from pchase.pair on
 * one SM: A fills, B walks, A re-reads timed; A's re-read missing means B's
 * walk evicted A's lines.
 *
 * - Amount ("sharing.amount.<element>"): A at thread 0 and B at thread 1, 2,
 *   4, … of one block, both through the element's load path, each array near
 *   the element's measured size. B evicting A at every thread: one cache per
 *   SM. Threads that kept A's lines are tested against each other too, so
 *   the count is of distinct caches, not of threads.
 * - Sharing ("sharing.<A>.<B>"): every ordered pair of the L1 paths and the
 *   constant L1, A and B in one warp (one SM sub-partition), A alone fitting
 *   its cache and A and B together not. Two elements share when both
 *   directions evict; directions that disagree are reported, not guessed.
 *
 * Sizes come from the per-SM strategies' series (they run first); an element
 * without a measured size is left out (no warning: it was not asked for).
 */
const PREFIX = 'sharing';
const AMOUNT_PREFIX = `${PREFIX}.amount`;
/** A plain global load (no cache operator) walked warm over half the L1: does the L1 cache it by default? */
const DEFAULT_GLOBAL = `${PREFIX}.defaultGlobal`;
const DEFAULT_GLOBAL_SHARE = 0.5;
const DEFAULT_GLOBAL_SAMPLES = 128;

interface Member {
  element: ElementName;
  spec: PerSmCacheSpec;
}

export const SHARING_MEMBERS: readonly Member[] = [
  { element: 'l1', spec: L1_SPEC },
  { element: 'texture', spec: TEXTURE_SPEC },
  { element: 'readOnly', spec: READ_ONLY_SPEC },
  { element: 'constantL1', spec: CONSTANT_SPEC },
];

/** Amount: each array this share of the measured size (one fits; two overflow one cache by far). */
const AMOUNT_SHARE = 0.85;
/** Sharing: B this share of A's size at most; A at least this share, and at most AMOUNT_SHARE, so that A + B ≥ OVERFLOW_SHARE of A's size. */
const SHARING_SHARE = 0.75;
const OVERFLOW_SHARE = 1.5;
/**
 * Timed loads of A's re-read at most (its first lap: the head of a sequential
 * walk, what B's walk evicts first). Few: every pair answers two series of
 * them, and about fifty pairs stay within a few tens of KB of raw series.
 */
const AMOUNT_SAMPLES = 64;
const SHARING_SAMPLES = 128;
const FIRST: Placement = { warp: 0, lane: 0 };

interface Placement {
  warp: number;
  lane: number;
}

function placementOf(thread: number, warpSize: number): Placement {
  return { warp: Math.floor(thread / warpSize), lane: thread % warpSize };
}

function threadOf(chaser: Pick<ChaserSpec, 'warp' | 'lane'>, warpSize: number): number {
  return (chaser.warp ?? 0) * warpSize + (chaser.lane ?? 0);
}

/** Thread indices 1, 2, 4, … below the block's thread limit (MT4G: B's core index doubles). */
export function amountThreads(device: Pick<DeviceProperties, 'maxThreadsPerBlock'>): number[] {
  const threads: number[] = [];
  for (let thread = 1; thread < Math.max(2, device.maxThreadsPerBlock); thread *= 2) threads.push(thread);
  return threads;
}

function aligned(bytes: number, strideBytes: number): number {
  return Math.max(strideBytes, Math.floor(bytes / strideBytes) * strideBytes);
}

/** The element's measured size, read from its size search's series; undefined when none was found. */
function measuredSizeBytes(raw: readonly RawSeries[], member: Member): number | undefined {
  const search = recordedSearch(raw, member.spec.plan.name);
  return search?.result.found ? search.result.lastBelowBytes : undefined;
}

/** A's and B's arrays for a sharing pair: B at most SHARING_SHARE of A's size (and what its space can hold), A fitting and the two overflowing. */
export function sharingArrays(aSizeBytes: number, a: PerSmCacheSpec, b: PerSmCacheSpec): { aBytes: number; bBytes: number } {
  const bBytes = aligned(Math.min(SHARING_SHARE * aSizeBytes, b.maxArrayBytes), b.sizeStrideBytes);
  const aWanted = Math.max(SHARING_SHARE * aSizeBytes, OVERFLOW_SHARE * aSizeBytes - bBytes);
  return { aBytes: aligned(Math.min(AMOUNT_SHARE * aSizeBytes, aWanted, a.maxArrayBytes), a.sizeStrideBytes), bBytes };
}

function pairArgs(
  a: PerSmCacheSpec,
  aBytes: number,
  aAt: Placement,
  b: PerSmCacheSpec,
  bBytes: number,
  bAt: Placement,
  maxSamples: number,
): PchasePairArgs {
  const chaser = (spec: PerSmCacheSpec, arrayBytes: number, at: Placement): ChaserSpec => ({
    space: spec.space,
    arrayBytes,
    strideBytes: spec.sizeStrideBytes,
    pattern: 'sequential',
    warp: at.warp,
    lane: at.lane,
  });
  return {
    first: chaser(a, aBytes, aAt),
    second: chaser(b, bBytes, bAt),
    placement: 'same-sm',
    samples: Math.min(maxSamples, Math.floor(aBytes / a.sizeStrideBytes)),
  };
}

function defaultGlobalArgs(l1SizeBytes: number, spec: PerSmCacheSpec): PchaseArgs {
  const arrayBytes = aligned(DEFAULT_GLOBAL_SHARE * l1SizeBytes, spec.sizeStrideBytes);
  return {
    space: 'global',
    arrayBytes,
    strideBytes: spec.sizeStrideBytes,
    pattern: 'sequential',
    warmup: true,
    samples: Math.min(DEFAULT_GLOBAL_SAMPLES, Math.floor(arrayBytes / spec.sizeStrideBytes)),
  };
}

export async function measureSharing(session: ProbeSession, device: DeviceProperties, onRound?: (round: string) => void): Promise<void> {
  const sized = SHARING_MEMBERS.flatMap((member) => {
    const sizeBytes = measuredSizeBytes(session.raw, member);
    return sizeBytes === undefined ? [] : [{ ...member, sizeBytes }];
  });
  const warpSize = device.warpSize > 0 ? device.warpSize : 32;
  for (const member of sized) await measureAmount(session, member, member.sizeBytes, amountThreads(device), warpSize);
  onRound?.(AMOUNT_PREFIX);
  const l1 = sized.find((member) => member.element === 'l1');
  if (l1) await session.request(DEFAULT_GLOBAL, 'pchase', defaultGlobalArgs(l1.sizeBytes, l1.spec));
  for (const a of sized) {
    for (const b of sized) {
      if (a === b) continue;
      const { aBytes, bBytes } = sharingArrays(a.sizeBytes, a.spec, b.spec);
      // Both in one warp: the nearest the pair op gets to MT4G's one core.
      await session.request(
        `${PREFIX}.${a.element}.${b.element}`,
        'pchase.pair',
        pairArgs(a.spec, aBytes, FIRST, b.spec, bBytes, { warp: 0, lane: 1 }, SHARING_SAMPLES),
      );
    }
  }
  onRound?.(PREFIX);
}

/**
 * Round 1: thread 0 against each doubling thread. Round 2, only when some
 * thread kept thread 0's lines: each such thread against one thread of each
 * group found so far, joining the first it evicts (a new group otherwise).
 */
async function measureAmount(
  session: ProbeSession,
  member: Member,
  sizeBytes: number,
  threads: readonly number[],
  warpSize: number,
): Promise<void> {
  const name = `${AMOUNT_PREFIX}.${member.element}`;
  const bytes = aligned(Math.min(AMOUNT_SHARE * sizeBytes, member.spec.maxArrayBytes / 2), member.spec.sizeStrideBytes);
  const reference = referenceFor(session.raw, member);
  const test = async (a: number, b: number): Promise<ReReadVerdict> => {
    const args = pairArgs(member.spec, bytes, placementOf(a, warpSize), member.spec, bytes, placementOf(b, warpSize), AMOUNT_SAMPLES);
    const result = await session.request(name, 'pchase.pair', args);
    return classifyReRead(result.firstLatenciesCycles, reference);
  };
  const kept: number[] = [];
  for (const thread of threads) {
    const verdict = await test(0, thread);
    if (verdict.found && !verdict.evicted) kept.push(thread);
  }
  const representatives: number[] = [];
  for (const thread of kept) {
    let joined = false;
    for (const representative of representatives) {
      const verdict = await test(representative, thread);
      if (verdict.found && verdict.evicted) {
        joined = true;
        break;
      }
    }
    if (!joined) representatives.push(thread);
  }
}

/** A's hit latency (its size sweep's resident sizes) and miss latency (sizes well past it: the next level), raw cycles. */
function referenceFor(raw: readonly RawSeries[], member: Member): ReReadReference | null {
  const search = recordedSearch(raw, member.spec.plan.name);
  if (!search?.result.found) return null;
  const { coarse, result } = search;
  return referenceOf(residentSamples(coarse, result.lastBelowBytes * 0.9, 8), nextLevelSamples(coarse, result.firstAboveBytes));
}

function pairSeries(raw: readonly RawSeries[], name: string): Array<{ args: PchasePairArgs; result: PchasePairResult }> {
  return raw
    .filter((series) => series.name === name && series.op === 'pchase.pair')
    .map((series) => ({ args: series.args as PchasePairArgs, result: series.result as PchasePairResult }));
}

/** The four elements' amount and sharedWith from recorded series (pure: discovery and re-analysis alike). */
export function buildSharing(raw: readonly RawSeries[], device: DeviceProperties): StrategyBuild {
  const warnings: string[] = [];
  const elements: Partial<Record<ElementName, ElementTopology>> = {};
  const warpSize = device.warpSize > 0 ? device.warpSize : 32;
  const references = new Map(SHARING_MEMBERS.map((member) => [member.element, referenceFor(raw, member)]));

  for (const member of SHARING_MEMBERS) {
    const runs = pairSeries(raw, `${AMOUNT_PREFIX}.${member.element}`);
    if (runs.length === 0) continue;
    const reference = references.get(member.element) ?? null;
    const tests: PlacementTest[] = runs.map(({ args, result }) => ({
      a: threadOf(args.first, warpSize),
      b: threadOf(args.second, warpSize),
      verdict: classifyReRead(result.firstLatenciesCycles, reference),
    }));
    const count = countCaches(tests);
    if (!count.found) {
      warnings.push(`${member.element}: no amount per SM (${count.reason})`);
      continue;
    }
    const threads = [...new Set(tests.map((test) => test.b))].sort((p, q) => p - q);
    elements[member.element] = {
      amount: {
        value: count.count,
        unit: 'count',
        per: 'sm',
        source: 'microbenchmark',
        confidence: count.confidence,
        note: `pchase.pair on one SM, thread 0 against threads ${threads.join(', ')}: ${count.count === 1 ? 'every one evicted its lines' : `threads in ${count.count} groups that keep each other's lines (${count.groups.map((group) => group.join('/')).join('; ')})`}`,
      },
    };
  }

  // Whether the L1 caches plain global loads: a warm walk over half its size, read against the L1's own hit and miss latencies.
  const defaultGlobal = raw.find((series) => series.name === DEFAULT_GLOBAL && series.op === 'pchase');
  if (defaultGlobal) {
    const verdict = classifyReRead((defaultGlobal.result as PchaseResult).latenciesCycles, references.get('l1') ?? null);
    if (verdict.found) elements.l1 = { ...elements.l1, cachesGlobalLoadsByDefault: !verdict.evicted };
    else warnings.push(`${PREFIX}: whether the L1 caches plain global loads is unclear (${verdict.reason})`);
  }

  const verdicts = new Map<string, ReReadVerdict>();
  for (const a of SHARING_MEMBERS) {
    for (const b of SHARING_MEMBERS) {
      const runs = a === b ? [] : pairSeries(raw, `${PREFIX}.${a.element}.${b.element}`);
      // One run per ordered pair: a repeated measurement pools its re-reads.
      if (runs.length > 0)
        verdicts.set(
          `${a.element}.${b.element}`,
          classifyReRead(
            runs.flatMap((run) => run.result.firstLatenciesCycles),
            references.get(a.element) ?? null,
          ),
        );
    }
  }
  const partners = new Map<ElementName, Set<ElementName>>();
  for (const [i, a] of SHARING_MEMBERS.entries()) {
    for (const b of SHARING_MEMBERS.slice(i + 1)) {
      const ab = verdicts.get(`${a.element}.${b.element}`);
      const ba = verdicts.get(`${b.element}.${a.element}`);
      if (!ab || !ba) continue;
      const decision = decideSharing(ab, ba);
      if (!decision.found) {
        warnings.push(`${PREFIX}: whether ${a.element} and ${b.element} share a cache is unclear (${decision.reason})`);
        continue;
      }
      for (const [x, y] of [
        [a.element, b.element],
        [b.element, a.element],
      ] as const) {
        const set = partners.get(x) ?? new Set<ElementName>();
        if (decision.shared) set.add(y);
        partners.set(x, set);
      }
    }
  }
  for (const [element, set] of partners) {
    elements[element] = { ...elements[element], sharedWith: ELEMENT_NAMES.filter((name) => set.has(name)) };
    // One physical cache is an equivalence: a partner's partners are partners too.
    for (const partner of set) {
      const missing = [...(partners.get(partner) ?? [])].filter((other) => other !== element && !set.has(other));
      if (missing.length > 0 && element < partner)
        warnings.push(`${PREFIX}: ${element} shares with ${partner}, which shares with ${missing.join(', ')}, but ${element} does not`);
    }
  }
  return { elements, warnings };
}

export const SHARING_STRATEGY: Strategy = {
  name: PREFIX,
  elements: SHARING_MEMBERS.map((member) => member.element),
  // pchase.batch: the per-SM strategies' size sweeps, which size every array here (without them there is nothing to pair).
  requiredOps: ['pchase.pair', 'pchase.batch'],
  // About fifty one-block launches of a few hundred thousand cycles each.
  progressWeight: 0.3,
  measure: measureSharing,
  build: (raw, device) => buildSharing(raw, device),
  keepsUnrepeatedSeries: true,
  ownsSeries: seriesUnder(PREFIX),
};
