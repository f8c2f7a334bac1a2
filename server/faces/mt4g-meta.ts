/**
 * MT4G's run record (`meta`) and the device facts MT4G reads from the
 * runtime's device properties that topod's document does not hold yet, with
 * what MT4G itself writes when it does not know one.
 *
 * MT4G (caps-tum/mt4g src/utils/tools.hpp) writes "unknown" for a host
 * compiler it cannot name; every other field comes from hipDeviceProp_t,
 * which HIP fills with zeros where the backend has no value (asicRevision is
 * 0 in every NVIDIA result MT4G publishes), so an unknown count reads 0 and
 * an unknown capability false. topod writes the same, so a script written
 * for MT4G's files finds every key, and lists each such path with the reason
 * under `topod.unknown`: a 0 or false there is "not known", never a fact.
 */
import type { GpuTopologyDocument } from '../model/document.js';
import type { DocumentDeviceProperties } from '../model/device-schema.js';

/** MT4G's `meta` besides its timestamp: how and where the benchmarks ran. */
export interface Mt4gRunRecord {
  /** CUDA driver API version (cudaDriverGetVersion: 13000 = 13.0). */
  driver: number | null;
  /** CUDA runtime version (cudaRuntimeGetVersion). */
  runtime: number | null;
  /** "nvcc 12.9.41": the compiler that built the benchmarks' kernels. */
  gpuCompiler: string | null;
  /** "gcc 13.3.0": the compiler that built the benchmarks' host code. */
  hostCompiler: string | null;
  /** /proc/cpuinfo's model name. */
  hostCpu: string | null;
  /** uname's sysname and release, "Linux 6.8.0-64-generic". */
  os: string | null;
}

/** The host the daemon runs on (and its probes with it), from node:os. */
export interface Mt4gHost {
  cpuModel: string | null;
  osName: string | null;
}

/** Device properties MT4G writes that hellos recorded before issue 21 lack (and asicRevision, null on NVIDIA). */
type PendingDeviceProperties = Pick<
  DocumentDeviceProperties,
  'asicRevision' | 'concurrentKernels' | 'cooperativeLaunch' | 'globalL1CacheSupported' | 'localL1CacheSupported'
>;

/** MT4G's own words for a value it does not know. */
export const MT4G_UNKNOWN = { text: 'unknown', count: 0, flag: false } as const;

/** Paths written as MT4G's "unknown" value, each with why topod does not know it. */
export type UnknownPaths = Record<string, string>;

const NOT_IN_HELLO =
  'the probe’s hello of this result did not report it (recorded before the probe read it; asicRevision is null on NVIDIA)';

/** The run record as far as the document and the host tell it; the rest null. */
export function mt4gRunRecord(document: GpuTopologyDocument, host: Mt4gHost): Mt4gRunRecord {
  // Without NVML or the kernel module, the cache key is the probe runtime's driver API version ("cuda-13000"): MT4G's `driver`.
  const runtimeDriver = /^cuda-(\d+)$/.exec(document.probe.driverVersion);
  return {
    driver: runtimeDriver ? Number(runtimeDriver[1]) : null,
    runtime: null,
    gpuCompiler: null,
    hostCompiler: null,
    hostCpu: host.cpuModel,
    os: host.osName,
  };
}

/** `meta` with every key MT4G writes; an unknown value is MT4G's placeholder, recorded in `unknown`. */
export function mt4gMeta(timestamp: string, run: Mt4gRunRecord, unknown: UnknownPaths): Record<string, string | number> {
  const meta: Record<string, string | number> = { timestamp };
  const numbers: Array<['driver' | 'runtime', string]> = [
    ['driver', 'the CUDA driver API version is not in the document (NVML gives the driver release instead)'],
    ['runtime', 'the probe runtime’s version is not in the document'],
  ];
  for (const [key, why] of numbers) {
    const value = run[key];
    meta[key] = value ?? MT4G_UNKNOWN.count;
    if (value === null) unknown[`meta.${key}`] = why;
  }
  const texts: Array<['gpuCompiler' | 'hostCompiler' | 'hostCpu' | 'os', string]> = [
    ['gpuCompiler', 'the probe does not report the compiler that built it'],
    ['hostCompiler', 'the probe does not report the compiler that built it'],
    ['hostCpu', 'the host’s CPU model could not be read'],
    ['os', 'the host’s operating system could not be read'],
  ];
  for (const [key, why] of texts) {
    const value = run[key];
    meta[key] = value ?? MT4G_UNKNOWN.text;
    if (value === null) unknown[`meta.${key}`] = why;
  }
  return meta;
}

/** A device property MT4G writes, from the document where it has it, else MT4G's unknown value (recorded). */
function pending<K extends keyof PendingDeviceProperties>(
  document: GpuTopologyDocument,
  key: K,
  path: string,
  unknownValue: NonNullable<PendingDeviceProperties[K]>,
  unknown: UnknownPaths,
): NonNullable<PendingDeviceProperties[K]> {
  const value = (document.device as PendingDeviceProperties)[key];
  if (value !== undefined && value !== null) return value as NonNullable<PendingDeviceProperties[K]>;
  unknown[path] = NOT_IN_HELLO;
  return unknownValue;
}

export function asicRevision(document: GpuTopologyDocument, unknown: UnknownPaths): number {
  return pending(document, 'asicRevision', 'general.asicRevision', MT4G_UNKNOWN.count, unknown);
}

export function concurrentKernels(document: GpuTopologyDocument, unknown: UnknownPaths): boolean {
  return pending(document, 'concurrentKernels', 'compute.concurrentKernels', MT4G_UNKNOWN.flag, unknown);
}

export function supportsCooperativeLaunch(document: GpuTopologyDocument, unknown: UnknownPaths): boolean {
  return pending(document, 'cooperativeLaunch', 'compute.supportsCooperativeLaunch', MT4G_UNKNOWN.flag, unknown);
}

export function localL1CacheSupported(document: GpuTopologyDocument, unknown: UnknownPaths): boolean {
  return pending(document, 'localL1CacheSupported', 'memory.l1.localL1CacheSupported', MT4G_UNKNOWN.flag, unknown);
}

/**
 * Whether the L1 caches global loads: the device property where the document
 * has it, else measured — a plain global load that hits once warm
 * (cachesGlobalLoadsByDefault), or an L1 found by chasing `ld.global.ca`
 * loads (the L1's size measured), both show it does.
 */
export function globalL1CacheSupported(document: GpuTopologyDocument, unknown: UnknownPaths): boolean {
  const property = (document.device as PendingDeviceProperties).globalL1CacheSupported;
  if (typeof property === 'boolean') return property;
  const l1 = document.elements.l1;
  if (l1?.cachesGlobalLoadsByDefault === true || l1?.size?.source === 'microbenchmark') return true;
  unknown['memory.l1.globalL1CacheSupported'] = 'not measured: no L1 found with global loads';
  return MT4G_UNKNOWN.flag;
}
