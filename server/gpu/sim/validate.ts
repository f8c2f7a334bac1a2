import { ProbeError } from '../backend.js';
import {
  MEMORY_SPACES,
  type BandwidthArgs,
  type CalibrateArgs,
  type ChaserSpec,
  type DeviceProperties,
  type MemorySpace,
  type PchaseArgs,
  type PchaseBatchArgs,
  type PchasePairArgs,
} from '../protocol.js';

/**
 * Request validation with the rules the native probe applies too, so a
 * request means the same on both backends. Every failure is a ProbeError
 * `bad_request` (or `out_of_memory` when arrays exceed device memory).
 */
export const MAX_SAMPLES = 1_000_000;
export const MAX_REPETITIONS = 10_000;
const MAX_UINT32 = 0xffff_ffff;

type Limits = Pick<
  DeviceProperties,
  'multiprocessorCount' | 'totalMemoryBytes' | 'totalConstMemBytes' | 'sharedMemPerBlockOptinBytes' | 'sharedMemPerBlockBytes' | 'maxThreadsPerBlock' | 'warpSize'
>;
type Fields = Record<string, unknown>;

function badRequest(message: string): never {
  throw new ProbeError('bad_request', message);
}

function fields(value: unknown, what: string): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) badRequest(`${what} must be an object`);
  return value as Fields;
}

function integer(source: Fields, key: string, min: number, max: number): number {
  const value = source[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    badRequest(`${key} must be an integer in [${min}, ${max}], got ${JSON.stringify(value)}`);
  }
  return value;
}

function optionalInteger(source: Fields, key: string, min: number, max: number): number | undefined {
  return source[key] === undefined ? undefined : integer(source, key, min, max);
}

function oneOf<T extends string>(source: Fields, key: string, allowed: readonly T[], fallback?: T): T {
  const value = source[key] ?? fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    badRequest(`${key} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value as T;
}

function boolean(source: Fields, key: string): boolean {
  const value = source[key];
  if (typeof value !== 'boolean') badRequest(`${key} must be a boolean, got ${JSON.stringify(value)}`);
  return value;
}

function checkFitsMemory(totalBytes: number, limits: Limits): void {
  if (totalBytes > limits.totalMemoryBytes) {
    throw new ProbeError('out_of_memory', `arrays of ${totalBytes} bytes exceed device memory of ${limits.totalMemoryBytes} bytes`);
  }
}

/** arrayBytes and strideBytes for one chaser in one space. */
function arrayShape(source: Fields, arrayBytes: number, space: MemorySpace, limits: Limits): number {
  const strideBytes = integer(source, 'strideBytes', 4, Number.MAX_SAFE_INTEGER);
  if (strideBytes % 4 !== 0) badRequest(`strideBytes must be a multiple of 4, got ${strideBytes}`);
  if (strideBytes > arrayBytes) badRequest(`strideBytes (${strideBytes}) must not exceed arrayBytes (${arrayBytes})`);
  const spaceLimit =
    space === 'constant' ? limits.totalConstMemBytes : space === 'shared' ? (limits.sharedMemPerBlockOptinBytes ?? limits.sharedMemPerBlockBytes) : null;
  if (spaceLimit !== null && arrayBytes > spaceLimit) {
    badRequest(`arrayBytes (${arrayBytes}) exceeds the ${space} memory limit of ${spaceLimit} bytes`);
  }
  return strideBytes;
}

function chaseCommon(source: Fields) {
  return {
    space: oneOf(source, 'space', MEMORY_SPACES),
    pattern: oneOf(source, 'pattern', ['sequential', 'random'] as const),
    warmup: boolean(source, 'warmup'),
    samples: integer(source, 'samples', 1, MAX_SAMPLES),
    seed: optionalInteger(source, 'seed', 0, MAX_UINT32),
  };
}

export function validatePchase(raw: unknown, limits: Limits): PchaseArgs {
  const source = fields(raw, 'args');
  const { space, pattern, warmup, samples, seed } = chaseCommon(source);
  const arrayBytes = integer(source, 'arrayBytes', 1, Number.MAX_SAFE_INTEGER);
  const strideBytes = arrayShape(source, arrayBytes, space, limits);
  checkFitsMemory(arrayBytes, limits);
  const smId = optionalInteger(source, 'smId', 0, limits.multiprocessorCount - 1);
  return { space, arrayBytes, strideBytes, pattern, warmup, samples, smId, seed };
}

export function validatePchaseBatch(raw: unknown, limits: Limits): PchaseBatchArgs {
  const source = fields(raw, 'args');
  const { space, pattern, warmup, samples, seed } = chaseCommon(source);
  const list = source.arrayBytesList;
  if (!Array.isArray(list) || list.length === 0 || list.length > limits.multiprocessorCount) {
    badRequest(`arrayBytesList must be an array of 1 to ${limits.multiprocessorCount} sizes (one per SM)`);
  }
  let strideBytes = 0;
  const arrayBytesList = list.map((value: unknown, index: number) => {
    const arrayBytes = integer({ [`arrayBytesList[${index}]`]: value }, `arrayBytesList[${index}]`, 1, Number.MAX_SAFE_INTEGER);
    strideBytes = arrayShape(source, arrayBytes, space, limits);
    return arrayBytes;
  });
  checkFitsMemory(
    arrayBytesList.reduce((sum, bytes) => sum + bytes, 0),
    limits,
  );
  return { space, arrayBytesList, strideBytes, pattern, warmup, samples, seed };
}

function chaser(raw: unknown, what: string, limits: Limits): Required<ChaserSpec> {
  const source = fields(raw, what);
  const space = oneOf(source, 'space', MEMORY_SPACES);
  const arrayBytes = integer(source, 'arrayBytes', 1, Number.MAX_SAFE_INTEGER);
  const strideBytes = arrayShape(source, arrayBytes, space, limits);
  const pattern = oneOf(source, 'pattern', ['sequential', 'random'] as const, 'sequential');
  const warpsPerBlock = Math.floor(limits.maxThreadsPerBlock / limits.warpSize);
  const warp = optionalInteger(source, 'warp', 0, warpsPerBlock - 1) ?? 0;
  const lane = optionalInteger(source, 'lane', 0, limits.warpSize - 1) ?? 0;
  return { space, arrayBytes, strideBytes, pattern, warp, lane };
}

export function validatePchasePair(raw: unknown, limits: Limits): PchasePairArgs & { first: Required<ChaserSpec>; second: Required<ChaserSpec> } {
  const source = fields(raw, 'args');
  const first = chaser(source.first, 'first', limits);
  const second = chaser(source.second, 'second', limits);
  const placement = oneOf(source, 'placement', ['same-sm', 'different-sm'] as const);
  if (placement === 'different-sm' && limits.multiprocessorCount < 2) badRequest('placement different-sm needs at least 2 SMs');
  checkFitsMemory(first.arrayBytes + second.arrayBytes, limits);
  return {
    first,
    second,
    placement,
    samples: integer(source, 'samples', 1, MAX_SAMPLES),
    seed: optionalInteger(source, 'seed', 0, MAX_UINT32),
  };
}

export function validateBandwidth(raw: unknown, limits: Limits): BandwidthArgs {
  const source = fields(raw, 'args');
  const mode = oneOf(source, 'mode', ['read', 'write'] as const);
  const arrayBytes = integer(source, 'arrayBytes', 4, Number.MAX_SAFE_INTEGER);
  if (arrayBytes % 4 !== 0) badRequest(`arrayBytes must be a multiple of 4, got ${arrayBytes}`);
  checkFitsMemory(arrayBytes, limits);
  return {
    mode,
    arrayBytes,
    blocks: integer(source, 'blocks', 1, 0x7fff_ffff),
    threadsPerBlock: integer(source, 'threadsPerBlock', 1, limits.maxThreadsPerBlock),
    repetitions: integer(source, 'repetitions', 1, MAX_REPETITIONS),
  };
}

export function validateCalibrate(raw: unknown): CalibrateArgs {
  const source = raw === undefined || raw === null ? {} : fields(raw, 'args');
  const samples = optionalInteger(source, 'samples', 1, MAX_SAMPLES);
  return samples === undefined ? {} : { samples };
}
