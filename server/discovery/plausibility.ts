import { combineConfidences } from '../analysis/index.js';
import type { DiscoveryOutcome, ElementName, ElementTopology, RawSeries } from '../model/document.js';
import { NEXT_LEVEL } from './miss-penalty.js';
import { STRATEGIES } from './registry.js';
import { STALL_CYCLES_WITHOUT_MEMORY_LATENCY, countOver, loadLatencies } from './stalled-loads.js';
import { lineSizePoints } from './stride-series.js';

/**
 * Plausibility checks (issue 17 item 3: calibrated confidence): a pure pass
 * over a finished outcome that holds each measured value against what
 * physics and the runtime's own figures allow, and against what the raw
 * series themselves show. A value that fails a check keeps its number but
 * loses its confidence down to the check's cap (never raised), and the
 * outcome gets a warning naming the check. On an idle GPU no check fires:
 * each one's margin is wide of what idle runs show (recorded H100 runs,
 * the simulator at zero interference).
 */

/** What a value that fails a check can still claim: the data cannot support it. */
const FAILED_CAP = 0.5;
/** A value measured from series in which loads stalled (another tenant's time slices) is not sure either. */
const STALLED_CAP = 0.8;
/** Segment size × segment count may differ from the API's L2 size by this share (sizes are measured within 1 %). */
const L2_TOTAL_TOLERANCE = 0.03;
/** A bandwidth may exceed the bus's peak by this share (the runtime's memory clock is rounded). */
const BUS_PEAK_TOLERANCE = 0.02;
/**
 * The L2 line-size walks read the line from the first stride whose walk fits
 * the cache, which lies in (ℓ, 2ℓ) only for arrays between one and 1.5
 * capacities (their strides are 1.125× and 1.5× powers of two): arrays
 * outside that band, sized from a wrong segment reading, read a wrong line.
 */
const LINE_WALK_ARRAYS = { minShare: 1, maxShare: 1.5 };
/**
 * No load takes this many times device memory's latency on an idle GPU
 * (recorded H100 runs: at most 3.3× device memory's mean in 1.5 M loads);
 * one that does spanned another tenant's time slice, and the cache state
 * around it is not what the benchmark set up.
 */
const STALL_FACTOR = 10;
/** Attributes of an element that carry a confidence (partitions as a whole). */
const CONFIDENT_ATTRIBUTES = [
  'size',
  'latency',
  'lineSize',
  'fetchGranularity',
  'fillGranularity',
  'amount',
  'segmentSize',
  'readBandwidth',
  'writeBandwidth',
  'missPenalty',
  'partitions',
] as const;
type ConfidentAttribute = (typeof CONFIDENT_ATTRIBUTES)[number];

export interface PlausibilityFinding {
  /** Stable name of the check, e.g. "l2-total-vs-api". */
  check: string;
  values: Array<{ element: ElementName; attribute: ConfidentAttribute }>;
  cap: number;
  /** Why, one sentence without the check's name. */
  reason: string;
}

type Elements = DiscoveryOutcome['elements'];
type Device = DiscoveryOutcome['device'];

/** The outcome with every failed check applied: confidences capped, one warning per check and element. Returns a new outcome; the input is left as it was. */
export function withPlausibility(outcome: DiscoveryOutcome): DiscoveryOutcome {
  const findings = plausibilityFindings(outcome);
  if (findings.length === 0) return outcome;
  const elements: Elements = { ...outcome.elements };
  const warnings = [...outcome.warnings];
  for (const finding of findings) {
    const lowered: string[] = [];
    for (const { element, attribute } of finding.values) {
      const topology = elements[element];
      if (!topology) continue;
      const capped = cappedConfidence(topology, attribute, finding.cap);
      if (!capped) continue;
      elements[element] = capped;
      lowered.push(`${element}.${attribute}`);
    }
    if (lowered.length > 0)
      warnings.push(`${lowered.join(', ')}: confidence at most ${finding.cap} (plausibility check ${finding.check}: ${finding.reason})`);
  }
  return { ...outcome, elements: withMissPenaltyConfidences(elements), warnings };
}

/** Every check's findings, in a fixed order. */
export function plausibilityFindings(outcome: DiscoveryOutcome): PlausibilityFinding[] {
  const { elements, device, raw } = outcome;
  return [
    ...l2TotalVsApi(elements, device),
    ...lineSizes(elements),
    ...l2LineWalkArrays(elements, device, raw),
    ...bandwidthVsBus(elements, device),
    ...bandwidthOrder(elements),
    ...latencyOrder(elements),
    ...sizeOrder(elements),
    ...stalledLoads(elements, raw),
  ];
}

/** One partition's capacity times the partitions must be the L2 the runtime reports. */
function l2TotalVsApi(elements: Elements, device: Device): PlausibilityFinding[] {
  const l2 = elements.l2;
  const apiBytes = device.l2CacheSizeBytes ?? 0;
  const segment = l2?.segmentSize;
  const count = l2?.partitions?.count ?? l2?.amount?.value;
  if (!segment || !count || apiBytes <= 0) return [];
  const ratio = (segment.value * count) / apiBytes;
  if (Math.abs(ratio - 1) <= L2_TOTAL_TOLERANCE) return [];
  const values: PlausibilityFinding['values'] = [{ element: 'l2', attribute: 'segmentSize' }];
  // A count read off the segment size falls with it; a measured partition count stands on its own series.
  if (l2.amount?.source === 'derived') values.push({ element: 'l2', attribute: 'amount' });
  return [
    {
      check: 'l2-total-vs-api',
      values,
      cap: FAILED_CAP,
      reason: `${count} × ${segment.value} bytes is ${ratio.toFixed(2)}× the ${apiBytes} bytes of L2 the runtime reports`,
    },
  ];
}

/** A line is a power of two, holds whole fetches, and device memory fills within one line. */
function lineSizes(elements: Elements): PlausibilityFinding[] {
  const findings: PlausibilityFinding[] = [];
  for (const [element, topology] of entries(elements)) {
    const line = topology.lineSize?.value;
    const fetch = topology.fetchGranularity?.value;
    const fill = topology.fillGranularity?.value;
    if (line !== undefined && !isPowerOfTwo(line)) {
      findings.push({
        check: 'line-power-of-two',
        values: [{ element, attribute: 'lineSize' }],
        cap: FAILED_CAP,
        reason: `a line of ${line} bytes is not a power of two`,
      });
    }
    if (line !== undefined && fetch !== undefined && line < fetch) {
      findings.push({
        check: 'line-holds-fetches',
        values: [
          { element, attribute: 'lineSize' },
          { element, attribute: 'fetchGranularity' },
        ],
        cap: FAILED_CAP,
        reason: `a line of ${line} bytes is smaller than the ${fetch}-byte fetch granularity`,
      });
    }
    if (fill !== undefined && ((fetch !== undefined && fill < fetch) || (line !== undefined && fill > line))) {
      findings.push({
        check: 'fill-within-line',
        values: [{ element, attribute: 'fillGranularity' }],
        cap: FAILED_CAP,
        reason: `a fill of ${fill} bytes is not between the fetch granularity (${fetch ?? '?'} B) and the line (${line ?? '?'} B)`,
      });
    }
  }
  return findings;
}

/** The L2 line-size walks are only read right over arrays just past one partition's capacity as the runtime gives it. */
function l2LineWalkArrays(elements: Elements, device: Device, raw: readonly RawSeries[]): PlausibilityFinding[] {
  const l2 = elements.l2;
  const apiBytes = device.l2CacheSizeBytes ?? 0;
  if (!l2?.lineSize || apiBytes <= 0) return [];
  const count = l2.partitions?.count ?? l2.amount?.value ?? 1;
  const capacity = apiBytes / Math.max(1, count);
  const sizes = [...new Set(lineSizePoints(raw, 'l2.line').map((point) => point.sizeBytes))];
  if (sizes.length === 0) return [];
  const [smallest, largest] = [Math.min(...sizes) / capacity, Math.max(...sizes) / capacity];
  if (smallest > LINE_WALK_ARRAYS.minShare && largest < LINE_WALK_ARRAYS.maxShare) return [];
  return [
    {
      check: 'l2-line-walk-arrays',
      values: [{ element: 'l2', attribute: 'lineSize' }],
      cap: FAILED_CAP,
      reason: `the line-size walks' arrays are ${smallest.toFixed(2)}–${largest.toFixed(2)}× one partition's ${Math.round(capacity)} bytes (the runtime's L2 over ${count}); the line reads right only between ${LINE_WALK_ARRAYS.minShare}× and ${LINE_WALK_ARRAYS.maxShare}×`,
    },
  ];
}

/** Device memory moves at most memory clock × bus width × 2 (double data rate). */
function bandwidthVsBus(elements: Elements, device: Device): PlausibilityFinding[] {
  const memory = elements.deviceMemory;
  const clockKHz = device.memoryClockRateKHz;
  const busBits = device.memoryBusWidthBits;
  if (!memory || !clockKHz || !busBits) return [];
  const peak = clockKHz * 1e3 * (busBits / 8) * 2;
  const findings: PlausibilityFinding[] = [];
  for (const attribute of ['readBandwidth', 'writeBandwidth'] as const) {
    const value = memory[attribute]?.value;
    if (value === undefined || value <= peak * (1 + BUS_PEAK_TOLERANCE)) continue;
    findings.push({
      check: 'bandwidth-vs-bus',
      values: [{ element: 'deviceMemory', attribute }],
      cap: FAILED_CAP,
      reason: `${value.toExponential(3)} bytes/s is more than the bus's ${peak.toExponential(3)} (memory clock ${clockKHz} kHz × ${busBits} bits × 2)`,
    });
  }
  return findings;
}

/** The L2 streams at least as fast as device memory behind it. */
function bandwidthOrder(elements: Elements): PlausibilityFinding[] {
  const findings: PlausibilityFinding[] = [];
  for (const attribute of ['readBandwidth', 'writeBandwidth'] as const) {
    const l2 = elements.l2?.[attribute]?.value;
    const memory = elements.deviceMemory?.[attribute]?.value;
    if (l2 === undefined || memory === undefined || l2 >= memory) continue;
    findings.push({
      check: 'bandwidth-order',
      values: [
        { element: 'l2', attribute },
        { element: 'deviceMemory', attribute },
      ],
      cap: FAILED_CAP,
      reason: `the L2's ${l2.toExponential(3)} bytes/s is below device memory's ${memory.toExponential(3)}`,
    });
  }
  return findings;
}

/** Each level a miss goes on to is slower than the one it left. */
function latencyOrder(elements: Elements): PlausibilityFinding[] {
  const findings: PlausibilityFinding[] = [];
  for (const [element, next] of Object.entries(NEXT_LEVEL) as Array<[ElementName, ElementName]>) {
    const own = elements[element]?.latency;
    const behind = elements[next]?.latency;
    if (!own || !behind || own.mean < behind.mean) continue;
    findings.push({
      check: 'latency-order',
      values: [
        { element, attribute: 'latency' },
        { element: next, attribute: 'latency' },
      ],
      cap: FAILED_CAP,
      reason: `a miss in ${element} (${own.mean} cycles) goes on to ${next}, yet ${next} is not slower (${behind.mean} cycles)`,
    });
  }
  return findings;
}

/** A per-SM cache is smaller than the L2 partition its misses go to. */
function sizeOrder(elements: Elements): PlausibilityFinding[] {
  const l2 = elements.l2;
  const l2Bytes = l2?.segmentSize?.value ?? l2?.size?.value;
  if (l2Bytes === undefined) return [];
  const findings: PlausibilityFinding[] = [];
  for (const element of ['l1', 'texture', 'readOnly', 'constantL1'] as const) {
    const size = elements[element]?.size;
    if (!size || size.source !== 'microbenchmark' || size.value < l2Bytes) continue;
    findings.push({
      check: 'size-order',
      values: [
        { element, attribute: 'size' },
        { element: 'l2', attribute: l2?.segmentSize ? 'segmentSize' : 'size' },
      ],
      cap: FAILED_CAP,
      reason: `${element} (${size.value} bytes) is not smaller than the L2 ${l2?.segmentSize ? 'partition' : 'cache'} it misses to (${l2Bytes} bytes)`,
    });
  }
  return findings;
}

/**
 * Loads far slower than the slowest level: another tenant's time slices
 * stopped the benchmark while they were timed. Without MPS the GPU
 * time-slices whole contexts, so a tenant seen by one benchmark was there
 * for the others too, where it leaves no such trace: its slices during a
 * warm-up evict what the timed loads then miss, and stretch bandwidth
 * timings evenly. Every measured value of the outcome is capped.
 */
function stalledLoads(elements: Elements, raw: readonly RawSeries[]): PlausibilityFinding[] {
  const memoryLatency = elements.deviceMemory?.latency?.mean;
  const limit = memoryLatency !== undefined && memoryLatency > 0 ? STALL_FACTOR * memoryLatency : STALL_CYCLES_WITHOUT_MEMORY_LATENCY;
  const stalledBy: string[] = [];
  let stalled = 0;
  let loads = 0;
  for (const strategy of STRATEGIES) {
    let stalledHere = 0;
    for (const series of raw) {
      if (!strategy.ownsSeries(series.name)) continue;
      for (const latencies of loadLatencies(series)) {
        loads += latencies.length;
        stalledHere += countOver(latencies, limit);
      }
    }
    if (stalledHere > 0) stalledBy.push(`${strategy.name}: ${stalledHere}`);
    stalled += stalledHere;
  }
  if (stalled === 0) return [];
  const values = entries(elements).flatMap(([element, topology]) =>
    CONFIDENT_ATTRIBUTES.filter((attribute) => measuredHere(topology, attribute)).map((attribute) => ({ element, attribute })),
  );
  return [
    {
      check: 'stalled-loads',
      values,
      cap: STALLED_CAP,
      reason: `${stalled} of ${loads} timed loads (${stalledBy.join(', ')}) took over ${Math.round(limit)} cycles${memoryLatency !== undefined ? ` (${STALL_FACTOR}× device memory's latency)` : ''}: another tenant's time slices ran on the GPU during the probe`,
    },
  ];
}

/** Whether the attribute is there and measured (not the runtime's figure, which no check lowers). */
function measuredHere(topology: ElementTopology, attribute: ConfidentAttribute): boolean {
  const value = topology[attribute];
  if (!value) return false;
  return value.source !== 'api' && value.confidence !== undefined;
}

/** The element with one attribute's confidence capped; null when there is nothing to lower. */
function cappedConfidence(topology: ElementTopology, attribute: ConfidentAttribute, cap: number): ElementTopology | null {
  const value = topology[attribute];
  if (!value || value.confidence === undefined || value.source === 'api' || value.confidence <= cap) return null;
  return { ...topology, [attribute]: { ...value, confidence: cap } };
}

/** A miss penalty is no surer than the two latencies it is the difference of. */
function withMissPenaltyConfidences(elements: Elements): Elements {
  const out: Elements = { ...elements };
  for (const [element, next] of Object.entries(NEXT_LEVEL) as Array<[ElementName, ElementName]>) {
    const penalty = out[element]?.missPenalty;
    const own = out[element]?.latency?.confidence;
    const behind = out[next]?.latency?.confidence;
    if (!penalty || penalty.confidence === undefined || own === undefined || behind === undefined) continue;
    const bound = combineConfidences(own, behind);
    if (penalty.confidence > bound) out[element] = { ...out[element], missPenalty: { ...penalty, confidence: bound } };
  }
  return out;
}

function entries(elements: Elements): Array<[ElementName, ElementTopology]> {
  return Object.entries(elements).filter((entry): entry is [ElementName, ElementTopology] => entry[1] !== undefined);
}

function isPowerOfTwo(value: number): boolean {
  return Number.isInteger(value) && value > 0 && (value & (value - 1)) === 0;
}
