/**
 * Whether GPUs of one model on one node measured alike. Each GPU is measured
 * on its own (two H100s of one board can differ: a fused-off SM, another
 * carveout, a driver setting), and this says whether they did differ, by the
 * accuracy tolerances the discovery is held to (scripts/validate/compare.ts):
 * discrete attributes equal, sizes within 3 %, latencies within 10 % — and,
 * for attributes those rules do not name (bandwidths, miss penalties),
 * within 10 % too. Pure.
 */
import type { GpuFacts } from './gpu-documents.js';

const DISCRETE = new Set(['lineSize', 'fetchGranularity', 'fillGranularity', 'amount']);
const SIZES = new Set(['size', 'segmentSize']);
export const SIZE_TOLERANCE = 0.03;
export const OTHER_TOLERANCE = 0.1;

export interface AttributeDifference {
  element: string;
  attribute: string;
  /** The relative spread allowed: 0 for discrete attributes. */
  tolerance: number;
  /** (max − min) / min over the GPUs that have it. */
  spread: number;
  values: Array<{ uuid: string; value: number }>;
}

export interface ModelAgreement {
  name: string;
  gpuUuids: string[];
  /** GPUs of this model with a served result. */
  measuredGpus: number;
  /** null: fewer than two measured GPUs of this model, nothing to compare. */
  agree: boolean | null;
  /** Attributes compared (present on at least two GPUs). */
  compared: number;
  differences: AttributeDifference[];
}

export interface NodeAgreement {
  /** null when no model has two measured GPUs; false when any model's GPUs differ. */
  agree: boolean | null;
  models: ModelAgreement[];
}

export function toleranceOf(attribute: string): number {
  if (DISCRETE.has(attribute)) return 0;
  if (SIZES.has(attribute)) return SIZE_TOLERANCE;
  return OTHER_TOLERANCE;
}

function compareModel(name: string, gpus: GpuFacts[]): ModelAgreement {
  const measured = gpus.filter((g) => g.measured !== null);
  const differences: AttributeDifference[] = [];
  let compared = 0;
  const keys = new Set<string>();
  for (const gpu of measured)
    for (const [element, attributes] of Object.entries(gpu.measured?.elements ?? {}))
      for (const attribute of Object.keys(attributes)) keys.add(`${element}\u0000${attribute}`);
  for (const key of [...keys].sort()) {
    const [element, attribute] = key.split('\u0000') as [string, string];
    const values = measured.flatMap((g) => {
      const value = g.measured?.elements[element]?.[attribute]?.value;
      return value === undefined ? [] : [{ uuid: g.uuid, value }];
    });
    if (values.length < 2) continue;
    compared += 1;
    const numbers = values.map((v) => v.value);
    const min = Math.min(...numbers);
    const max = Math.max(...numbers);
    const spread = min === max ? 0 : min > 0 ? (max - min) / min : Number.POSITIVE_INFINITY;
    const tolerance = toleranceOf(attribute);
    if (spread > tolerance) differences.push({ element, attribute, tolerance, spread, values });
  }
  return {
    name,
    gpuUuids: gpus.map((g) => g.uuid),
    measuredGpus: measured.length,
    agree: measured.length < 2 ? null : differences.length === 0,
    compared,
    differences,
  };
}

/** Groups GPUs by model name and compares each group's measured attributes. */
export function nodeAgreement(gpus: GpuFacts[]): NodeAgreement {
  const byModel = new Map<string, GpuFacts[]>();
  for (const gpu of gpus) byModel.set(gpu.name, [...(byModel.get(gpu.name) ?? []), gpu]);
  const models = [...byModel.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, group]) => compareModel(name, group));
  const verdicts = models.map((m) => m.agree).filter((a): a is boolean => a !== null);
  return { agree: verdicts.length === 0 ? null : verdicts.every(Boolean), models };
}
