/**
 * A value measured while other processes used the GPU (an admin's evenIfBusy,
 * or TOPOD_PROBE_WHEN=always) cannot be told apart from one they distorted:
 * on an H100 a streaming tenant turned the L2 line size from 128 B into 256 B
 * at confidence 1.00 (issue 17). Such values keep what they measured but never
 * read as sure.
 */
import type { ElementTopology } from '../model/document.js';
import type { ProbeConditions } from '../model/conditions-schema.js';

/** The most confidence a value measured on a busy GPU carries. */
export const BUSY_CONFIDENCE_CAP = 0.5;

/** The element with every measured value's confidence capped (values from the API or tables are left as they are). */
export function capBusyConfidence(element: ElementTopology): ElementTopology {
  return capped(element) as ElementTopology;
}

function capped(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(capped);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).map(([key, inner]) => [key, capped(inner)] as const);
  const object = Object.fromEntries(entries) as Record<string, unknown>;
  if (object['source'] === 'microbenchmark' && typeof object['confidence'] === 'number')
    object['confidence'] = Math.min(object['confidence'], BUSY_CONFIDENCE_CAP);
  return object;
}

/** The warning a result measured on a busy GPU carries. */
export function busyWarning(conditions: ProbeConditions): string {
  return `measured while other processes used the GPU (${conditions.busyReason ?? 'processes seen during the probe'}): measured values carry at most confidence ${BUSY_CONFIDENCE_CAP}`;
}
