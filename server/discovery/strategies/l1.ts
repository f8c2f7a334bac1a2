import type { DeviceProperties } from '../../protocol/ops.js';
import { perSmCacheStrategy, type PerSmCacheSpec } from './per-sm-cache.js';
import type { SizeSearchPlan } from '../size-search.js';

/**
 * The unified L1 and the two other load paths through it, texture and
 * read-only (thesis §4.1; MT4G Table I lists each with its own size, latency,
 * line and fetch granularity). One load per 128 B line in the size sweep, and
 * enough timed loads to cover the whole array near the L1 size: real L1s
 * hash lines to sets, so which lines a slightly too large array loses
 * depends on its size, and timing only the array's head would see them by
 * luck (seen on an H100).
 */
const KIB = 1024;
const STRIDE_BYTES = 128;
const SAMPLES = 2048;

function searchPlan(prefix: string): SizeSearchPlan {
  return {
    name: `${prefix}.size`,
    lowBytes: 8 * KIB,
    highBytes: 1024 * KIB,
    pointsPerOctave: 8,
    refinePoints: 32,
    refineRounds: 1,
    alignBytes: STRIDE_BYTES,
    minBytes: 1 * KIB,
    maxBytes: 16 * 1024 * KIB,
    maxWidenings: 2,
  };
}

export const L1_SEARCH_PLAN: SizeSearchPlan = searchPlan('l1');

/**
 * The chasers of one launch share the L2: their arrays together must stay
 * well inside it, or misses in L1 would reach device memory and a second
 * step would blur the first.
 */
const L2_SHARE_PER_LAUNCH = 0.25;

function l1PathSpec(element: 'l1' | 'texture' | 'readOnly', space: 'global.ca' | 'texture' | 'readonly', prefix: string): PerSmCacheSpec {
  return {
    element,
    space,
    prefix,
    plan: prefix === 'l1' ? L1_SEARCH_PLAN : searchPlan(prefix),
    sizeStrideBytes: STRIDE_BYTES,
    sizeSamples: SAMPLES,
    bytesPerLaunch: (device: DeviceProperties) => Math.max(1024 * KIB, device.l2CacheSizeBytes * L2_SHARE_PER_LAUNCH),
    maxArrayBytes: 16 * 1024 * KIB,
    fetchStrides: [4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256],
    maxLineStrideBytes: 512,
  };
}

export const L1_SPEC = l1PathSpec('l1', 'global.ca', 'l1');
export const TEXTURE_SPEC = l1PathSpec('texture', 'texture', 'texture');
export const READ_ONLY_SPEC = l1PathSpec('readOnly', 'readonly', 'readonly');

// A few batched launches each (every SM at once): a small share of a discovery.
export const L1_STRATEGY = perSmCacheStrategy(L1_SPEC, 1);
export const TEXTURE_STRATEGY = perSmCacheStrategy(TEXTURE_SPEC, 1);
export const READ_ONLY_STRATEGY = perSmCacheStrategy(READ_ONLY_SPEC, 1);
