import type { DiscoveryOutcome, ElementName } from '../../model/document.js';
import { l1CapacityBytes } from './launch.js';
import type { GpuModel, L1Space } from './model.js';

/**
 * The simulated GPU's ground truth for what a discovery on it reports: each
 * value the outcome holds that the model defines, with its confidence and
 * whether it is right. Discrete values (line sizes, granularities, counts)
 * must be exact; sizes within 1 %, latencies within 3 % (the L2's 5 %: its
 * hits mix near and far), bandwidths within 5 % (the tolerances of the
 * simulated-discovery tests). Derived values (miss penalties) and values from
 * the API are left out: they are not measured.
 */
export interface TruthCheck {
  /** e.g. "l2.segmentSize". */
  path: string;
  value: number;
  truth: number;
  confidence: number;
  correct: boolean;
}

const SIZE_TOLERANCE = 0.01;
const LATENCY_TOLERANCE = 0.03;
const L2_LATENCY_TOLERANCE = 0.05;
const BANDWIDTH_TOLERANCE = 0.05;

interface Expectation {
  path: string;
  truth: number;
  /** Relative tolerance; 0 for exact. */
  tolerance: number;
}

export function checkAgainstModel(outcome: DiscoveryOutcome, model: GpuModel): TruthCheck[] {
  const checks: TruthCheck[] = [];
  for (const expectation of expectations(outcome, model)) {
    const measured = valueAt(outcome, expectation.path);
    if (!measured) continue;
    const { value, confidence } = measured;
    const correct =
      expectation.tolerance === 0
        ? value === expectation.truth
        : Math.abs(value - expectation.truth) <= expectation.tolerance * expectation.truth;
    checks.push({ path: expectation.path, value, truth: expectation.truth, confidence, correct });
  }
  return checks;
}

function expectations(outcome: DiscoveryOutcome, model: GpuModel): Expectation[] {
  const out: Expectation[] = [];
  const exact = (path: string, truth: number) => out.push({ path, truth, tolerance: 0 });
  const near = (path: string, truth: number, tolerance: number) => out.push({ path, truth, tolerance });
  const carveout = outcome.carveout;
  const l1Bytes = carveout ? l1CapacityBytes(model, carveout.blockSharedBytes, carveout.preferredSharedPercent) : null;
  for (const [element, space] of [
    ['l1', 'global.ca'],
    ['texture', 'texture'],
    ['readOnly', 'readonly'],
  ] as const satisfies ReadonlyArray<readonly [ElementName, L1Space]>) {
    if (l1Bytes !== null) near(`${element}.size`, l1Bytes, SIZE_TOLERANCE);
    exact(`${element}.lineSize`, model.l1.lineBytes);
    exact(`${element}.fetchGranularity`, model.l1.sectorBytes);
    exact(`${element}.amount`, 1);
    near(`${element}.latency`, model.l1.hitLatencyCycles[space], LATENCY_TOLERANCE);
  }
  exact('constantL1.size', model.constantL1.sizeBytes);
  exact('constantL1.lineSize', model.constantL1.lineBytes);
  exact('constantL1.fetchGranularity', model.constantL1.sectorBytes);
  exact('constantL1.amount', 1);
  near('constantL1.latency', model.constantL1.hitLatencyCycles, LATENCY_TOLERANCE);
  exact('constantL15.fetchGranularity', model.constantL15.sectorBytes);
  near('constantL15.latency', model.constantL15.hitLatencyCycles, LATENCY_TOLERANCE);
  near('shared.latency', model.shared.latencyCycles, LATENCY_TOLERANCE);

  const l2 = model.l2;
  near('l2.segmentSize', l2.segment.sizeBytes, SIZE_TOLERANCE);
  exact('l2.amount', l2.segmentCount);
  exact('l2.partitions', l2.segmentCount);
  exact('l2.lineSize', l2.segment.lineBytes);
  exact('l2.fetchGranularity', l2.segment.sectorBytes);
  exact('l2.fillGranularity', Math.min(l2.segment.lineBytes, model.device.maxL2FetchGranularityBytes));
  near(
    'l2.latency',
    l2.farHomedHitsCostFar ? (l2.nearHitLatencyCycles + l2.farHitLatencyCycles) / 2 : l2.nearHitLatencyCycles,
    L2_LATENCY_TOLERANCE,
  );
  near('l2.readBandwidth', l2.readBandwidthBytesPerS, BANDWIDTH_TOLERANCE);
  near('l2.writeBandwidth', l2.writeBandwidthBytesPerS, BANDWIDTH_TOLERANCE);
  const memory = model.deviceMemory;
  near(
    'deviceMemory.latency',
    memory.nearLatencyCycles === undefined ? memory.latencyCycles : (memory.nearLatencyCycles + memory.latencyCycles) / 2,
    LATENCY_TOLERANCE,
  );
  near('deviceMemory.readBandwidth', memory.readBandwidthBytesPerS, BANDWIDTH_TOLERANCE);
  near('deviceMemory.writeBandwidth', memory.writeBandwidthBytesPerS, BANDWIDTH_TOLERANCE);
  return out;
}

/** The measured value at "element.attribute" (a latency's mean, the partitions' count) and its confidence; null when absent or not measured. */
function valueAt(outcome: DiscoveryOutcome, path: string): { value: number; confidence: number } | null {
  const [element, attribute] = path.split('.') as [ElementName, string];
  const topology = outcome.elements[element];
  if (!topology) return null;
  if (attribute === 'latency') {
    const latency = topology.latency;
    return latency && latency.source === 'microbenchmark' ? { value: latency.mean, confidence: latency.confidence ?? 0 } : null;
  }
  if (attribute === 'partitions') {
    const partitions = topology.partitions;
    return partitions ? { value: partitions.count, confidence: partitions.confidence } : null;
  }
  const measured = topology[attribute as 'size'];
  if (!measured || measured.source === 'api' || measured.bound !== undefined) return null;
  return { value: measured.value, confidence: measured.confidence ?? 0 };
}
