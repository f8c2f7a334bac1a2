/**
 * The document as MT4G 1.x writes its JSON result (caps-tum/mt4g v1.2.0; see
 * shared/ECOSYSTEM.md): top-level `compute`, `general`, `memory`, `meta`,
 * every key MT4G writes, in nlohmann's `dump(4)` layout and number types
 * (mt4g-json.ts), so sys-sage's MT4G parser and scripts written for MT4G's
 * files read topod's.
 *
 * Shapes follow MT4G: measured sizes `{size, confidence, method, unit,
 * randomized}`, device properties `{value, unit}` (so `l2.size` is
 * `{value, unit}`), latencies `{mean, p50, p95, stdev, measurements,
 * sampleSize, unit, method}`, miss penalties `{value, unit: "cycles"}`,
 * bandwidths in GiB/s. A benchmark topod has not run is left out, as MT4G
 * leaves out one it did not run; a device fact MT4G always writes and topod
 * does not know is MT4G's own "unknown" value, listed in `topod.unknown`
 * (mt4g-meta.ts). A constant L1.5 known only as a lower bound is MT4G's own
 * "larger than 64 KiB, not detected" sentinel ({size: 65537, confidence: 0}).
 *
 * Every file parses in sys-sage 1.1.0 (src/parsers/mt4g.cpp), which reads
 * some keys whenever it reads others, without checking: the bandwidths of
 * `main` and `l2` wherever they have a latency, and a texture, read-only or
 * constant cache's size, fetch granularity and latency whenever the section
 * is there. MT4G writes those together, so topod writes a latency of `main`
 * or `l2` only with both bandwidths (a MIG device has none: they are the
 * whole GPU's) and a cache section only whole; what it holds back is under
 * `topod.withheld`, in MT4G's shapes.
 *
 * Everything MT4G has no field for — value sources, the L2's segments, fill
 * granularity, the MIG view, elements MT4G does not know — goes under one
 * extension key, `topod`. The conditions the result was measured under sit
 * beside MT4G's run record as `meta.topodConditions`, when recorded.
 */
import type { ElementTopology, GpuTopologyDocument, LatencyValue, MeasuredValue, MigInstanceTopologyDocument } from '../model/document.js';
import { elementEntries } from './documents.js';
import { dumpMt4g, mt4gFloat, plainJson, sortKeys, type Mt4gJson, type Mt4gObject, type PlainJson } from './mt4g-json.js';
import {
  asicRevision,
  concurrentKernels,
  globalL1CacheSupported,
  localL1CacheSupported,
  MT4G_UNKNOWN,
  mt4gMeta,
  supportsCooperativeLaunch,
  type Mt4gRunRecord,
  type UnknownPaths,
} from './mt4g-meta.js';

export { sortKeys } from './mt4g-json.js';
export type { Mt4gHost, Mt4gRunRecord } from './mt4g-meta.js';
export { mt4gRunRecord } from './mt4g-meta.js';

export const MT4G_MEDIA_TYPE = 'application/vnd.mt4g+json';
/** The extension key: MT4G has no field for what it holds. */
export const MT4G_EXTENSION_KEY = 'topod';
/** MT4G's "larger than 64 KiB, not detected" result for the constant L1.5 (enums.hpp). */
export const MT4G_L15_SENTINEL_BYTES = 65537;
/** Where `meta` holds the document's `conditions`: MT4G's meta keys are timestamp, compilers, host, driver, runtime, mt4gVersion. */
export const MT4G_CONDITIONS_KEY = 'topodConditions';

/**
 * CUDA cores per SM by compute capability: the CUDA samples' _ConvertSMVer2Cores
 * table MT4G reports `numberOfCoresPerMultiProcessor` from (a property of the
 * architecture, not a measurement).
 */
const CORES_PER_SM: Record<string, number> = {
  '3.0': 192,
  '3.2': 192,
  '3.5': 192,
  '3.7': 192,
  '5.0': 128,
  '5.2': 128,
  '5.3': 128,
  '6.0': 64,
  '6.1': 128,
  '6.2': 128,
  '7.0': 64,
  '7.2': 64,
  '7.5': 64,
  '8.0': 64,
  '8.6': 128,
  '8.7': 128,
  '8.9': 128,
  '9.0': 128,
  '10.0': 128,
  '10.1': 128,
  '10.3': 128,
  '11.0': 128,
  '12.0': 128,
  '12.1': 128,
};

/** MT4G's display names in `sharedWith`. */
const SHARED_WITH_NAMES: Record<string, string> = { l1: 'L1', readOnly: 'Read Only', texture: 'Texture', constantL1: 'Constant L1' };

const GIB = 1024 ** 3;

const clone = (value: unknown): Mt4gJson => JSON.parse(JSON.stringify(value ?? null)) as Mt4gJson;

function sizeResult(value: MeasuredValue): Mt4gObject {
  return { size: value.value, confidence: mt4gFloat(value.confidence ?? 1), method: 'p-chase', unit: 'bytes', randomized: false };
}

/**
 * MT4G's latency: statistics over `measurements` loads of `sampleSize` timed.
 * topod keeps the count the statistics were computed over (sampleCount, after
 * outliers were dropped), not the count timed: it is written for both.
 */
function latencyResult(latency: LatencyValue): Mt4gObject {
  return {
    mean: mt4gFloat(latency.mean),
    p50: mt4gFloat(latency.p50),
    p95: mt4gFloat(latency.p95),
    stdev: mt4gFloat(latency.stdev),
    measurements: latency.sampleCount,
    sampleSize: latency.sampleCount,
    unit: 'cycles',
    method: 'p-chase',
  };
}

const valueUnit = (value: number, unit: string): Mt4gObject => ({ value, unit });
const bandwidth = (value: MeasuredValue): Mt4gObject => ({ value: mt4gFloat(value.value / GIB), unit: 'GiB/s' });

/** The attributes MT4G has for a cache, in its shapes; `sizeAsValue` for the L2 (MT4G reads its size from the device). */
function cacheSection(element: ElementTopology, options: { sizeAsValue?: boolean } = {}): Mt4gObject {
  const out: Mt4gObject = {};
  if (element.size) out['size'] = options.sizeAsValue ? valueUnit(element.size.value, 'bytes') : sizeResult(element.size);
  if (element.lineSize) out['lineSize'] = sizeResult(element.lineSize);
  if (element.fetchGranularity) out['fetchGranularity'] = sizeResult(element.fetchGranularity);
  if (element.segmentSize) out['segmentSize'] = sizeResult(element.segmentSize);
  if (element.latency) out['latency'] = latencyResult(element.latency);
  if (element.missPenalty) out['missPenalty'] = { value: mt4gFloat(element.missPenalty.value), unit: 'cycles' };
  if (element.readBandwidth) out['readBandwidth'] = bandwidth(element.readBandwidth);
  if (element.writeBandwidth) out['writeBandwidth'] = bandwidth(element.writeBandwidth);
  if (element.amount?.per === 'sm') out['amountPerMultiprocessor'] = element.amount.value;
  const shared = (element.sharedWith ?? []).map((name) => SHARED_WITH_NAMES[name]).filter((name): name is string => name !== undefined);
  if (shared.length > 0) out['sharedWith'] = shared;
  return out;
}

/** What MT4G has no field for, per element: sources, bounds, notes, fill granularity, L2 segment count. */
function elementExtras(element: ElementTopology): Mt4gObject {
  const extras: Mt4gObject = {};
  for (const [attribute, value] of Object.entries(element)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const v = value as Partial<MeasuredValue>;
    const entry: Mt4gObject = {};
    if (v.source !== undefined) entry['source'] = v.source;
    if (v.bound !== undefined) entry['bound'] = v.bound;
    if (v.note !== undefined) entry['note'] = v.note;
    if ('meanNs' in value && typeof value.meanNs === 'number') entry['meanNs'] = value.meanNs;
    if (attribute === 'missPenalty' && typeof v.value === 'number') entry['cycles'] = v.value;
    if (attribute === 'fillGranularity' || attribute === 'amount') Object.assign(entry, clone(value) as Mt4gObject);
    if (Object.keys(entry).length > 0) extras[attribute] = entry;
  }
  if (element.measuredAt !== undefined) extras['measuredAt'] = element.measuredAt;
  return extras;
}

/** Whether sys-sage can read a cache section it reads whole: size, fetch granularity and latency all there. */
const whole = (section: Mt4gObject): boolean => 'size' in section && 'fetchGranularity' in section && 'latency' in section;

/** MT4G's timestamp: ISO 8601 in UTC to the second. */
const mt4gTimestamp = (iso: string) => `${iso.slice(0, 19)}Z`;

export interface Mt4gOptions {
  /** Export a MIG device: SMs, L2 share and memory of the instance, per-SM caches of the parent. */
  migDevice?: MigInstanceTopologyDocument;
  /** MT4G's run record (compilers, host, driver); what is missing is written as MT4G's "unknown". */
  run?: Partial<Mt4gRunRecord>;
}

const NO_RUN: Mt4gRunRecord = { driver: null, runtime: null, gpuCompiler: null, hostCompiler: null, hostCpu: null, os: null };

/** The MT4G 1.x result, floats marked (mt4g-json.ts), keys sorted. */
function mt4gTree(document: GpuTopologyDocument, options: Mt4gOptions): Mt4gJson {
  const device = document.device;
  const mig = options.migDevice;
  const elements = mig ? { ...document.elements, ...mig.elements } : document.elements;
  const unknown: UnknownPaths = {};
  const withheld: Mt4gObject = {};
  /** A device value MT4G always writes: the document's, or MT4G's unknown 0 (recorded). */
  const known = (value: number | null | undefined, path: string, why = 'the runtime did not report it'): number => {
    if (typeof value === 'number') return value;
    unknown[path] = why;
    return MT4G_UNKNOWN.count;
  };

  const general: Mt4gObject = {
    name: document.gpu.name,
    vendor: document.gpu.vendor === 'nvidia' ? 'NVIDIA' : 'AMD',
    computeCapability: {
      major: known(device.computeCapabilityMajor, 'general.computeCapability.major'),
      minor: known(device.computeCapabilityMinor, 'general.computeCapability.minor'),
    },
    clockRate: valueUnit(known(device.clockRateKHz, 'general.clockRate.value'), 'kHz'),
    asicRevision: asicRevision(document, unknown),
  };

  const profile = mig ? document.mig?.profiles.find((p) => p.id === mig.instance.profileId) : undefined;
  const smCount = mig
    ? (mig.computeInstance?.multiprocessorCount ?? mig.instance.multiprocessorCount ?? profile?.multiprocessorCount)
    : device.multiprocessorCount;
  const cores =
    document.gpu.vendor === 'nvidia' ? CORES_PER_SM[`${device.computeCapabilityMajor}.${device.computeCapabilityMinor}`] : undefined;
  const compute: Mt4gObject = {
    multiProcessorCount: known(smCount, 'compute.multiProcessorCount'),
    numberOfCoresPerMultiProcessor: known(
      cores,
      'compute.numberOfCoresPerMultiProcessor',
      'not in the cores-per-SM table for this architecture',
    ),
    maxThreadsPerBlock: known(device.maxThreadsPerBlock, 'compute.maxThreadsPerBlock'),
    regsPerBlock: known(device.regsPerBlock, 'compute.regsPerBlock'),
    regsPerMultiProcessor: known(device.regsPerMultiprocessor, 'compute.regsPerMultiProcessor'),
    warpSize: known(device.warpSize, 'compute.warpSize'),
    maxThreadsPerMultiProcessor: known(device.maxThreadsPerMultiprocessor, 'compute.maxThreadsPerMultiProcessor'),
    maxBlocksPerMultiProcessor: known(device.maxBlocksPerMultiprocessor, 'compute.maxBlocksPerMultiProcessor'),
    concurrentKernels: concurrentKernels(document, unknown),
    supportsCooperativeLaunch: supportsCooperativeLaunch(document, unknown),
  };

  const memory: Mt4gObject = {};
  const mapped = new Set<string>();
  const take = (name: keyof typeof elements): ElementTopology | undefined => {
    mapped.add(name);
    return elements[name];
  };

  // MT4G always writes the L1 section, with the runtime's two cache flags; sys-sage needs it there.
  const l1 = take('l1');
  memory['l1'] = {
    ...(l1 ? cacheSection(l1) : {}),
    globalL1CacheSupported: globalL1CacheSupported(document, unknown),
    localL1CacheSupported: localL1CacheSupported(document, unknown),
  };
  for (const name of ['texture', 'readOnly'] as const) {
    const element = take(name);
    if (!element) continue;
    const section = cacheSection(element);
    if (whole(section)) memory[name] = section;
    else withheld[`memory.${name}`] = section;
  }

  /** `main` and `l2`: a latency goes with both bandwidths, as MT4G measures them, or is held back. */
  const latencyWithBandwidths = (section: Mt4gObject, path: string): Mt4gObject => {
    if (!('latency' in section) || ('readBandwidth' in section && 'writeBandwidth' in section)) return section;
    const { latency, ...rest } = section;
    withheld[`${path}.latency`] = latency as Mt4gJson;
    return rest;
  };

  const l2 = take('l2');
  const l2Section = latencyWithBandwidths(l2 ? cacheSection(l2, { sizeAsValue: true }) : {}, 'memory.l2');
  if (!l2Section['size'])
    l2Section['size'] = valueUnit(known(mig ? mig.elements.l2?.size?.value : device.l2CacheSizeBytes, 'memory.l2.size.value'), 'bytes');
  const persisting = mig ? null : device.persistingL2CacheMaxBytes;
  l2Section['persistingL2CacheMaxSize'] = valueUnit(
    known(
      persisting,
      'memory.l2.persistingL2CacheMaxSize.value',
      mig ? 'not known for a MIG device (the runtime reports the whole GPU’s)' : 'the runtime did not report it',
    ),
    'bytes',
  );
  memory['l2'] = l2Section;

  const constant: Mt4gObject = {
    totalConstMem: valueUnit(known(device.totalConstMemBytes, 'memory.constant.totalConstMem.value'), 'bytes'),
  };
  const constantL1 = take('constantL1');
  const constantL15 = take('constantL15');
  const constantCaches: Mt4gObject = {};
  if (constantL1) constantCaches['l1'] = cacheSection(constantL1);
  if (constantL15) {
    const section = cacheSection(constantL15);
    if (constantL15.size?.bound === 'lower')
      section['size'] = { ...sizeResult(constantL15.size), size: MT4G_L15_SENTINEL_BYTES, confidence: mt4gFloat(0) };
    // MT4G measures no miss penalty for the L1.5 (the penalty topod measured stays under topod.elements).
    delete section['missPenalty'];
    constantCaches['l1.5'] = section;
  }
  // sys-sage reads both constant caches whole once either is there (a size, fetch granularity, and the L1's latency).
  const l15 = constantCaches['l1.5'] as Mt4gObject | undefined;
  const cL1 = constantCaches['l1'] as Mt4gObject | undefined;
  if (cL1 && l15 && whole(cL1) && 'size' in l15 && 'fetchGranularity' in l15) Object.assign(constant, constantCaches);
  else for (const [key, section] of Object.entries(constantCaches)) withheld[`memory.constant.${key}`] = section;
  memory['constant'] = constant;

  const sharedElement = take('shared');
  const shared: Mt4gObject = {
    sharedMemPerBlock: valueUnit(known(device.sharedMemPerBlockBytes, 'memory.shared.sharedMemPerBlock.value'), 'bytes'),
    sharedMemPerMultiProcessor: valueUnit(
      known(device.sharedMemPerMultiprocessorBytes ?? sharedElement?.size?.value, 'memory.shared.sharedMemPerMultiProcessor.value'),
      'bytes',
    ),
    reservedSharedMemPerBlock: valueUnit(
      known(device.reservedSharedMemPerBlockBytes, 'memory.shared.reservedSharedMemPerBlock.value'),
      'bytes',
    ),
  };
  if (sharedElement?.latency) shared['latency'] = latencyResult(sharedElement.latency);
  memory['shared'] = shared;

  const deviceMemory = take('deviceMemory');
  const main: Mt4gObject = {
    memoryBusWidth: valueUnit(known(device.memoryBusWidthBits, 'memory.main.memoryBusWidth.value'), 'bit'),
    memoryClockRate: valueUnit(known(device.memoryClockRateKHz, 'memory.main.memoryClockRate.value'), 'kHz'),
    totalGlobalMem: valueUnit(
      known(
        mig ? (mig.elements.deviceMemory?.size?.value ?? profile?.memorySizeBytes) : (deviceMemory?.size?.value ?? device.totalMemoryBytes),
        'memory.main.totalGlobalMem.value',
      ),
      'bytes',
    ),
  };
  if (deviceMemory?.latency) main['latency'] = latencyResult(deviceMemory.latency);
  if (deviceMemory?.readBandwidth) main['readBandwidth'] = bandwidth(deviceMemory.readBandwidth);
  if (deviceMemory?.writeBandwidth) main['writeBandwidth'] = bandwidth(deviceMemory.writeBandwidth);
  memory['main'] = latencyWithBandwidths(main, 'memory.main');

  const meta: Mt4gObject = mt4gMeta(mt4gTimestamp(document.probe.finishedAt), { ...NO_RUN, ...options.run }, unknown);
  if (document.conditions) meta[MT4G_CONDITIONS_KEY] = clone(document.conditions);

  const elementExtensions: Mt4gObject = {};
  const unmapped: Mt4gObject = {};
  for (const [name, element] of elementEntries({ ...document, elements } as GpuTopologyDocument)) {
    const extras = elementExtras(element);
    if (Object.keys(extras).length > 0) elementExtensions[name] = extras;
    if (!mapped.has(name)) unmapped[name] = clone(element);
  }
  const extension: Mt4gObject = {
    description: 'what MT4G has no field for, from the topod topology document (GET /v1/gpus/{id}/topology)',
    documentSchemaVersion: document.schemaVersion,
    uuid: document.gpu.uuid,
    pciBusId: document.gpu.pciBusId,
    simulated: document.simulated,
    driverVersion: document.probe.driverVersion,
    probe: clone(document.probe),
    clock: clone(document.clock),
    elements: elementExtensions,
    unmappedElements: unmapped,
    unknown,
    withheld,
    l2: {
      segments: l2?.amount?.per === 'gpu' ? l2.amount.value : null,
      segmentBytes: l2?.segmentSize?.value ?? null,
      note: 'an SM reaches its near L2 segment directly and the far one across the crossbar; MT4G has one L2 (size) and segmentSize only',
    },
    notes: {
      unknown: 'paths written with MT4G’s own value for “not known” (0, false, "unknown"), and why topod does not know them',
      withheld:
        'what MT4G writes only together with what topod did not measure (a latency of main or l2 without both bandwidths; a cache without its size, fetch granularity or latency), in MT4G’s shapes: sys-sage reads those together',
    },
    mig: clone(document.mig),
  };
  if (mig) {
    extension['migDevice'] = {
      migDeviceUuid: mig.migDeviceUuid,
      gpuInstanceId: mig.instance.gpuInstanceId,
      profileName: mig.instance.profileName,
      note: 'multiProcessorCount, l2.size and main.totalGlobalMem are this MIG device’s; the per-SM caches are the parent GPU’s',
    };
  }
  return sortKeys({ compute, general, memory, meta, [MT4G_EXTENSION_KEY]: extension });
}

/** The MT4G 1.x result for a GPU document (or, with `migDevice`, one of its MIG devices), as JSON.parse reads the file. */
export function mt4gResult(document: GpuTopologyDocument, options: Mt4gOptions = {}): PlainJson {
  return plainJson(mt4gTree(document, options));
}

/** The file as MT4G writes it: `dump(4)`, doubles written as doubles. */
export function mt4gJson(document: GpuTopologyDocument, options: Mt4gOptions = {}): string {
  return dumpMt4g(mt4gTree(document, options));
}
