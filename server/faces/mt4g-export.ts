/**
 * The document as MT4G 1.x writes its JSON result (caps-tum/mt4g v1.2.0; see
 * shared/ECOSYSTEM.md): top-level `compute`, `general`, `memory`, `meta`,
 * keys in alphabetical order and four-space indentation as nlohmann's
 * `dump(4)` prints them, so sys-sage's MT4G parser and anything else that
 * reads MT4G's results reads topod's.
 *
 * Shapes follow MT4G: measured sizes `{size, confidence, method, unit,
 * randomized}`, device properties `{value, unit}` (so `l2.size` is
 * `{value, unit}`), latencies `{mean, p50, p95, stdev, measurements, unit,
 * method}`, miss penalties `{value, unit: "cycles"}`, bandwidths in GiB/s.
 * What topod has not measured is left out, as MT4G leaves out a benchmark it
 * did not run; a constant L1.5 known only as a lower bound is MT4G's own
 * "larger than 64 KiB, not detected" sentinel ({size: 65537, confidence: 0}).
 * Everything MT4G has no field for — value sources, the L2's segments,
 * fill granularity, the MIG view, elements MT4G does not know — goes under
 * one extension key, `topod`. The conditions the result was measured under
 * (other processes, clocks and their event reasons, temperature, power) sit
 * beside MT4G's own run record in `meta`, as `meta.topodConditions` (a key
 * MT4G does not use), and only when the document recorded them.
 */
import type { ElementTopology, GpuTopologyDocument, LatencyValue, MeasuredValue, MigInstanceTopologyDocument } from '../model/document.js';
import { elementEntries } from './documents.js';

export const MT4G_MEDIA_TYPE = 'application/vnd.mt4g+json';
/** The extension key: MT4G has no field for what it holds. */
export const MT4G_EXTENSION_KEY = 'topod';
/** MT4G's "larger than 64 KiB, not detected" result for the constant L1.5 (enums.hpp). */
export const MT4G_L15_SENTINEL_BYTES = 65537;
/** Where `meta` holds the document's `conditions`: MT4G's meta keys are timestamp, compilers, host, driver, runtime, mt4gVersion. */
export const MT4G_CONDITIONS_KEY = 'topodConditions';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/**
 * CUDA cores per SM by compute capability: the CUDA samples' _ConvertSMVer2Cores
 * table MT4G reports `numberOfCoresPerMultiProcessor` from (a property of the
 * architecture, not a measurement). Unknown capabilities are left out.
 */
const CORES_PER_SM: Record<string, number> = {
  '3.0': 192, '3.2': 192, '3.5': 192, '3.7': 192,
  '5.0': 128, '5.2': 128, '5.3': 128,
  '6.0': 64, '6.1': 128, '6.2': 128,
  '7.0': 64, '7.2': 64, '7.5': 64,
  '8.0': 64, '8.6': 128, '8.7': 128, '8.9': 128,
  '9.0': 128,
  '10.0': 128, '10.1': 128, '10.3': 128, '11.0': 128, '12.0': 128, '12.1': 128,
};

/** MT4G's display names in `sharedWith`. */
const SHARED_WITH_NAMES: Record<string, string> = { l1: 'L1', readOnly: 'Read Only', texture: 'Texture', constantL1: 'Constant L1' };

const GIB = 1024 ** 3;

/** nlohmann::json keeps object keys in a std::map: alphabetical, recursively. */
export function sortKeys(value: Json): Json {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys(value[key] as Json)]),
  );
}

function sizeResult(value: MeasuredValue): JsonObject {
  // A lower bound on the constant L1.5 is what MT4G reports with its sentinel; other bounds keep their value.
  return { size: value.value, confidence: value.confidence ?? 1, method: 'p-chase', unit: 'bytes', randomized: false };
}

function latencyResult(latency: LatencyValue): JsonObject {
  return { mean: latency.mean, p50: latency.p50, p95: latency.p95, stdev: latency.stdev, measurements: latency.sampleCount, unit: 'cycles', method: 'p-chase' };
}

const valueUnit = (value: number, unit: string): JsonObject => ({ value, unit });
const bandwidth = (value: MeasuredValue): JsonObject => valueUnit(value.value / GIB, 'GiB/s');

/** The attributes MT4G has for a cache, in its shapes; `sizeAsValue` for the L2 (MT4G reads its size from the device). */
function cacheSection(element: ElementTopology, options: { sizeAsValue?: boolean } = {}): JsonObject {
  const out: JsonObject = {};
  if (element.size) out['size'] = options.sizeAsValue ? valueUnit(element.size.value, 'bytes') : sizeResult(element.size);
  if (element.lineSize) out['lineSize'] = sizeResult(element.lineSize);
  if (element.fetchGranularity) out['fetchGranularity'] = sizeResult(element.fetchGranularity);
  if (element.segmentSize) out['segmentSize'] = sizeResult(element.segmentSize);
  if (element.latency) out['latency'] = latencyResult(element.latency);
  if (element.missPenalty) out['missPenalty'] = valueUnit(element.missPenalty.value, 'cycles');
  if (element.readBandwidth) out['readBandwidth'] = bandwidth(element.readBandwidth);
  if (element.writeBandwidth) out['writeBandwidth'] = bandwidth(element.writeBandwidth);
  if (element.amount?.per === 'sm') out['amountPerMultiprocessor'] = element.amount.value;
  const shared = (element.sharedWith ?? []).map((name) => SHARED_WITH_NAMES[name]).filter((name): name is string => name !== undefined);
  if (shared.length > 0) out['sharedWith'] = shared;
  return out;
}

/** What MT4G has no field for, per element: sources, bounds, notes, fill granularity, L2 segment count. */
function elementExtras(element: ElementTopology): JsonObject {
  const extras: JsonObject = {};
  for (const [attribute, value] of Object.entries(element)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const v = value as Partial<MeasuredValue>;
    const entry: JsonObject = {};
    if (v.source !== undefined) entry['source'] = v.source;
    if (v.bound !== undefined) entry['bound'] = v.bound;
    if (v.note !== undefined) entry['note'] = v.note;
    if ('meanNs' in value && typeof value.meanNs === 'number') entry['meanNs'] = value.meanNs;
    if (attribute === 'fillGranularity' || attribute === 'amount') Object.assign(entry, JSON.parse(JSON.stringify(value)) as JsonObject);
    if (Object.keys(entry).length > 0) extras[attribute] = entry;
  }
  if (element.measuredAt !== undefined) extras['measuredAt'] = element.measuredAt;
  return extras;
}

/** MT4G's timestamp: ISO 8601 in UTC to the second. */
const mt4gTimestamp = (iso: string) => `${iso.slice(0, 19)}Z`;

export interface Mt4gOptions {
  /** Export a MIG device: SMs, L2 share and memory of the instance, per-SM caches of the parent. */
  migDevice?: MigInstanceTopologyDocument;
}

/** The MT4G 1.x result for a GPU document (or, with `migDevice`, one of its MIG devices), as a JSON value. */
export function mt4gResult(document: GpuTopologyDocument, options: Mt4gOptions = {}): Json {
  const device = document.device;
  const mig = options.migDevice;
  const elements = mig ? { ...document.elements, ...mig.elements } : document.elements;

  const general: JsonObject = { name: document.gpu.name, vendor: document.gpu.vendor === 'nvidia' ? 'NVIDIA' : 'AMD' };
  if (device.computeCapabilityMajor !== undefined && device.computeCapabilityMinor !== undefined) {
    general['computeCapability'] = { major: device.computeCapabilityMajor, minor: device.computeCapabilityMinor };
  }
  if (typeof device.clockRateKHz === 'number') general['clockRate'] = valueUnit(device.clockRateKHz, 'kHz');

  const compute: JsonObject = {};
  const smCount = mig ? (mig.computeInstance?.multiprocessorCount ?? mig.instance.multiprocessorCount) : device.multiprocessorCount;
  if (typeof smCount === 'number') compute['multiProcessorCount'] = smCount;
  const cores = CORES_PER_SM[`${device.computeCapabilityMajor}.${device.computeCapabilityMinor}`];
  if (document.gpu.vendor === 'nvidia' && cores !== undefined) compute['numberOfCoresPerMultiProcessor'] = cores;
  const counts: Array<[string, number | null | undefined]> = [
    ['maxThreadsPerBlock', device.maxThreadsPerBlock],
    ['regsPerBlock', device.regsPerBlock],
    ['regsPerMultiProcessor', device.regsPerMultiprocessor],
    ['warpSize', device.warpSize],
    ['maxThreadsPerMultiProcessor', device.maxThreadsPerMultiprocessor],
    ['maxBlocksPerMultiProcessor', device.maxBlocksPerMultiprocessor],
  ];
  for (const [key, value] of counts) if (typeof value === 'number') compute[key] = value;

  const memory: JsonObject = {};
  const mapped = new Set<string>();
  const take = (name: keyof typeof elements): ElementTopology | undefined => {
    mapped.add(name);
    return elements[name];
  };
  for (const name of ['l1', 'texture', 'readOnly'] as const) {
    const element = take(name);
    if (element) memory[name] = cacheSection(element);
  }
  const l2 = take('l2');
  if (l2 || device.l2CacheSizeBytes !== undefined) {
    const section = l2 ? cacheSection(l2, { sizeAsValue: true }) : {};
    if (!section['size'] && device.l2CacheSizeBytes !== undefined) section['size'] = valueUnit(device.l2CacheSizeBytes, 'bytes');
    if (typeof device.persistingL2CacheMaxBytes === 'number' && !mig) section['persistingL2CacheMaxSize'] = valueUnit(device.persistingL2CacheMaxBytes, 'bytes');
    memory['l2'] = section;
  }
  const constant: JsonObject = {};
  const constantL1 = take('constantL1');
  if (constantL1) constant['l1'] = cacheSection(constantL1);
  const constantL15 = take('constantL15');
  if (constantL15) {
    const section = cacheSection(constantL15);
    if (constantL15.size?.bound === 'lower') section['size'] = { ...sizeResult(constantL15.size), size: MT4G_L15_SENTINEL_BYTES, confidence: 0 };
    constant['l1.5'] = section;
  }
  if (typeof device.totalConstMemBytes === 'number') constant['totalConstMem'] = valueUnit(device.totalConstMemBytes, 'bytes');
  if (Object.keys(constant).length > 0) memory['constant'] = constant;

  const sharedElement = take('shared');
  const shared: JsonObject = {};
  if (sharedElement?.latency) shared['latency'] = latencyResult(sharedElement.latency);
  if (typeof device.sharedMemPerBlockBytes === 'number') shared['sharedMemPerBlock'] = valueUnit(device.sharedMemPerBlockBytes, 'bytes');
  const perSm = device.sharedMemPerMultiprocessorBytes ?? sharedElement?.size?.value;
  if (typeof perSm === 'number') shared['sharedMemPerMultiProcessor'] = valueUnit(perSm, 'bytes');
  if (typeof device.reservedSharedMemPerBlockBytes === 'number') shared['reservedSharedMemPerBlock'] = valueUnit(device.reservedSharedMemPerBlockBytes, 'bytes');
  if (Object.keys(shared).length > 0) memory['shared'] = shared;

  const deviceMemory = take('deviceMemory');
  const main: JsonObject = {};
  if (deviceMemory?.latency) main['latency'] = latencyResult(deviceMemory.latency);
  if (deviceMemory?.readBandwidth) main['readBandwidth'] = bandwidth(deviceMemory.readBandwidth);
  if (deviceMemory?.writeBandwidth) main['writeBandwidth'] = bandwidth(deviceMemory.writeBandwidth);
  if (typeof device.memoryBusWidthBits === 'number') main['memoryBusWidth'] = valueUnit(device.memoryBusWidthBits, 'bit');
  if (typeof device.memoryClockRateKHz === 'number') main['memoryClockRate'] = valueUnit(device.memoryClockRateKHz, 'kHz');
  const totalMemory = deviceMemory?.size?.value ?? device.totalMemoryBytes;
  if (typeof totalMemory === 'number') main['totalGlobalMem'] = valueUnit(totalMemory, 'bytes');
  if (Object.keys(main).length > 0) memory['main'] = main;

  const meta: JsonObject = { timestamp: mt4gTimestamp(document.probe.finishedAt) };
  if (document.conditions) meta[MT4G_CONDITIONS_KEY] = JSON.parse(JSON.stringify(document.conditions)) as Json;

  const elementExtensions: JsonObject = {};
  const unmapped: JsonObject = {};
  for (const [name, element] of elementEntries({ ...document, elements } as GpuTopologyDocument)) {
    const extras = elementExtras(element);
    if (Object.keys(extras).length > 0) elementExtensions[name] = extras;
    if (!mapped.has(name)) unmapped[name] = JSON.parse(JSON.stringify(element)) as Json;
  }
  const extension: JsonObject = {
    description: 'what MT4G has no field for, from the topod topology document (GET /v1/gpus/{id}/topology)',
    documentSchemaVersion: document.schemaVersion,
    uuid: document.gpu.uuid,
    pciBusId: document.gpu.pciBusId,
    simulated: document.simulated,
    driverVersion: document.probe.driverVersion,
    probe: JSON.parse(JSON.stringify(document.probe)) as Json,
    clock: JSON.parse(JSON.stringify(document.clock)) as Json,
    elements: elementExtensions,
    unmappedElements: unmapped,
    l2: {
      segments: l2?.amount?.per === 'gpu' ? l2.amount.value : null,
      segmentBytes: l2?.segmentSize?.value ?? null,
      note: 'an SM reaches its near L2 segment directly and the far one across the crossbar; MT4G has one L2 (size) and segmentSize only',
    },
    mig: JSON.parse(JSON.stringify(document.mig)) as Json,
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

/** The file as MT4G writes it: `dump(4)`. */
export function mt4gJson(document: GpuTopologyDocument, options: Mt4gOptions = {}): string {
  return JSON.stringify(mt4gResult(document, options), null, 4);
}
