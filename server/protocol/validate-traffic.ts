/**
 * The traffic op's request rules (issue 20), beside the other ops' in
 * ./validate.ts, whose list at the top names them; the simulated GPU calls
 * validateTraffic, the native probe follows the same rules
 * (native/probe/src/traffic-op.cpp) with the same limits (./limits.ts).
 */
import {
  DEFAULT_TRAFFIC_REPETITIONS,
  MAX_ARRAY_BYTES,
  MAX_REPETITIONS,
  MAX_TRAFFIC_CASES,
  MAX_TRAFFIC_METRIC_CHARS,
  MAX_TRAFFIC_METRICS,
  RUNTIME_MARGIN_BYTES,
  TRAFFIC_FLUSH_L2_MULTIPLE,
} from './limits.js';
import {
  L2_FETCH_GRANULARITIES,
  TRAFFIC_DEFAULT_METRICS,
  TRAFFIC_ELEMENT_BYTES,
  TRAFFIC_METHODS,
  TRAFFIC_PATTERNS,
  TRAFFIC_TARGETS,
  type DeviceProperties,
  type TrafficArgs,
  type TrafficCase,
} from './ops.js';
import { ProbeError } from './probe-error.js';

type Limits = Pick<DeviceProperties, 'totalMemoryBytes' | 'l2CacheSizeBytes'>;
export interface ValidTrafficArgs extends Required<Omit<TrafficArgs, 'cases' | 'l2FetchGranularityBytes'>> {
  cases: Array<Required<TrafficCase>>;
  l2FetchGranularityBytes: number | null;
}

function bad(message: string): never {
  throw new ProbeError('bad_request', message);
}

function integerIn(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max)
    bad(`${name} must be an integer in [${min}, ${max}], got ${JSON.stringify(value)}`);
  return value;
}

function choice<T extends string>(value: unknown, name: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value))
    bad(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  return value as T;
}

/** traffic's rules (the list at the top of ./validate.ts; native/probe/src/traffic-op.cpp), defaults filled in. */
export function validateTraffic(raw: unknown, limits: Limits): ValidTrafficArgs {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) bad('args must be an object');
  const source = raw as Record<string, unknown>;
  const method = choice(source['method'], 'method', TRAFFIC_METHODS);
  const footprintBytes = integerIn(source['footprintBytes'], 'footprintBytes', 16, MAX_ARRAY_BYTES);
  if (footprintBytes % 16 !== 0) bad(`footprintBytes must be a multiple of 16, got ${footprintBytes}`);
  const list = source['cases'];
  if (!Array.isArray(list) || list.length < 1 || list.length > MAX_TRAFFIC_CASES)
    bad(`cases must be an array of 1 to ${MAX_TRAFFIC_CASES} cases`);
  const cases = list.map((entry): Required<TrafficCase> => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) bad('cases must be an array of case objects');
    const c = entry as Record<string, unknown>;
    const pattern = choice(c['pattern'], 'cases[].pattern', TRAFFIC_PATTERNS);
    const elementBytes = integerIn(c['elementBytes'], 'cases[].elementBytes', 4, 16);
    if (!(TRAFFIC_ELEMENT_BYTES as readonly number[]).includes(elementBytes)) bad('cases[].elementBytes must be one of 4, 8, 16');
    const strideElements = integerIn(c['strideElements'], 'cases[].strideElements', 1, Math.floor(footprintBytes / elementBytes));
    const target = c['target'] === undefined ? 'written' : choice(c['target'], 'cases[].target', TRAFFIC_TARGETS);
    return { pattern, elementBytes, strideElements, target };
  });
  const repetitions =
    source['repetitions'] === undefined ? DEFAULT_TRAFFIC_REPETITIONS : integerIn(source['repetitions'], 'repetitions', 1, MAX_REPETITIONS);
  let metrics: string[] = [...TRAFFIC_DEFAULT_METRICS];
  if (source['metrics'] !== undefined) {
    const names = source['metrics'];
    if (!Array.isArray(names) || names.length < 1 || names.length > MAX_TRAFFIC_METRICS)
      bad(`metrics must be an array of 1 to ${MAX_TRAFFIC_METRICS} metric names`);
    for (const name of names) {
      if (typeof name !== 'string' || name.length === 0 || name.length > MAX_TRAFFIC_METRIC_CHARS || !/^[a-z0-9_.]+$/.test(name)) {
        bad(`metrics must be metric names of lower-case letters, digits, '_' and '.' (at most ${MAX_TRAFFIC_METRIC_CHARS})`);
      }
    }
    metrics = names as string[];
  }
  let l2FetchGranularityBytes: number | null = null;
  if (source['l2FetchGranularityBytes'] !== undefined) {
    l2FetchGranularityBytes = integerIn(source['l2FetchGranularityBytes'], 'l2FetchGranularityBytes', 32, 128);
    if (!(L2_FETCH_GRANULARITIES as readonly number[]).includes(l2FetchGranularityBytes))
      bad('l2FetchGranularityBytes must be one of 32, 64, 128');
  }
  const need = 3 * footprintBytes + TRAFFIC_FLUSH_L2_MULTIPLE * limits.l2CacheSizeBytes;
  if (need + RUNTIME_MARGIN_BYTES > limits.totalMemoryBytes) {
    throw new ProbeError(
      'out_of_memory',
      `${need} bytes (plus a ${RUNTIME_MARGIN_BYTES}-byte runtime margin) exceed device memory of ${limits.totalMemoryBytes} bytes`,
    );
  }
  return { method, footprintBytes, cases, repetitions, metrics, l2FetchGranularityBytes };
}
