import { combineConfidences } from '../analysis/index.js';
import type { ElementName, ElementTopology } from '../model/document.js';

/** Where a miss in each NVIDIA element goes next (thesis §2): the L1 paths and the constant L1.5 to the L2, the L2 to device memory. */
export const NEXT_LEVEL: Partial<Record<ElementName, ElementName>> = {
  l1: 'l2',
  texture: 'l2',
  readOnly: 'l2',
  constantL1: 'constantL15',
  constantL15: 'l2',
  l2: 'deviceMemory',
};

/**
 * Adds each element's miss penalty: the next level's mean latency minus its
 * own (source "derived"), where both were measured. Pure; returns new objects.
 */
export function withMissPenalties(elements: Partial<Record<ElementName, ElementTopology>>): Partial<Record<ElementName, ElementTopology>> {
  const out: Partial<Record<ElementName, ElementTopology>> = { ...elements };
  for (const [name, next] of Object.entries(NEXT_LEVEL) as Array<[ElementName, ElementName]>) {
    const own = elements[name]?.latency;
    const behind = elements[next]?.latency;
    if (!own || !behind) continue;
    out[name] = {
      ...elements[name],
      missPenalty: {
        value: Math.round((behind.mean - own.mean) * 100) / 100,
        unit: 'cycles',
        source: 'derived',
        confidence: combineConfidences(own.confidence ?? 0, behind.confidence ?? 0),
      },
    };
  }
  return out;
}
