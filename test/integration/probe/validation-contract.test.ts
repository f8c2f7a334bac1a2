import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROBE_OPS, type DeviceProperties, type ProbeErrorCode } from '../../../server/protocol/ops.js';
import { GPU_MODELS } from '../../../server/gpu/sim/index.js';
import { CONSTANT_TABLE_BYTES, MAX_CHAIN_BYTES, MAX_SAMPLES, MAX_TEXTURE_ELEMENTS } from '../../../server/protocol/limits.js';
import { exchange, PROBE_PATH, probeBuilt, REPO_ROOT } from './raw-probe.js';

// One table of bad requests, answered by the simulated GPU (stdio adapter) and
// the real topod-probe: both must answer each with the same error code (the
// rule list at the top of server/protocol/validate.ts) and keep serving.
// Without a GPU the probe checks every device-free field itself; rows that
// need a device's limits are answered `unsupported` (no GPU visible) there,
// and compared in full on a GPU machine.

const SIM_MODEL = 'h100-sxm5-80gb';
const SIM_ARGS = ['--import', 'tsx', path.join(REPO_ROOT, 'server/gpu/sim/stdio.ts'), '--model', SIM_MODEL, '--seed', '1'];
const hasGpu = existsSync('/dev/nvidia0');

type Limits = Pick<
  DeviceProperties,
  | 'multiprocessorCount'
  | 'totalMemoryBytes'
  | 'totalConstMemBytes'
  | 'sharedMemPerBlockOptinBytes'
  | 'sharedMemPerBlockBytes'
  | 'maxThreadsPerBlock'
  | 'warpSize'
>;

interface Row {
  name: string;
  /** The request line; `id` is the row's id, or absent where the row is about the id. */
  line: (d: Limits, id: number) => string;
  code: ProbeErrorCode;
  /** The rule needs the device's limits (a probe without a GPU answers `unsupported`). */
  needsDevice?: boolean;
  /** The answer carries id null (the request's id could not be read). */
  nullId?: boolean;
}

const chase = { space: 'global.ca', arrayBytes: 4096, strideBytes: 64, pattern: 'sequential', warmup: true, samples: 16 };
const chaser = { space: 'global.ca', arrayBytes: 4096, strideBytes: 64 };
const bandwidth = { mode: 'read', arrayBytes: 1 << 20, blocks: 8, threadsPerBlock: 128, repetitions: 2 };
const smid = { clusterSize: 2, clusters: 2, repetitions: 1 };
const clusterSync = { clusterSize: 2, threadsPerBlock: 32, samples: 16 };
const dsmem = { samples: 16, transferBytes: 1024, threadsPerBlock: 32, repetitions: 2 };
const clusterLaunch = { clusterSize: 4, blocks: 64, spinNs: 1000, repetitions: 2 };
const farnear = { smIds: [0, 1], arrayBytes: 1 << 20, strideBytes: 256, passes: 2, shared: false };
const persist = { arrayBytes: 1 << 22, windowBytes: 1 << 20, hitRatio: 1, samples: 64 };
const trafficCase = { pattern: 'read', elementBytes: 4, strideElements: 8, target: 'written' };
const traffic = { method: 'timing', footprintBytes: 1 << 20, cases: [trafficCase], repetitions: 1 };
const down = (bytes: number, unit: number) => Math.floor(bytes / unit) * unit;
const constLimit = (d: Limits) => Math.min(d.totalConstMemBytes ?? CONSTANT_TABLE_BYTES, CONSTANT_TABLE_BYTES);
const sharedLimit = (d: Limits) => d.sharedMemPerBlockOptinBytes ?? d.sharedMemPerBlockBytes;

function request(op: string, args: (d: Limits) => unknown): (d: Limits, id: number) => string {
  return (d, id) => JSON.stringify({ id, op, args: args(d) });
}
const bad = (name: string, op: string, args: (d: Limits) => unknown, code: ProbeErrorCode = 'bad_request'): Row => ({
  name,
  line: request(op, args),
  code,
});
const device = (name: string, op: string, args: (d: Limits) => unknown, code: ProbeErrorCode = 'bad_request'): Row => ({
  ...bad(name, op, args, code),
  needsDevice: true,
});

const ROWS: Row[] = [
  // Envelope.
  { name: 'malformed JSON line', line: () => '{"id":1,"op":"pchase","args":', code: 'bad_request', nullId: true },
  { name: 'request not an object', line: () => '[1,2,3]', code: 'bad_request', nullId: true },
  { name: 'negative id', line: () => '{"id":-1,"op":"hello","args":{}}', code: 'bad_request', nullId: true },
  { name: 'missing op', line: (_, id) => JSON.stringify({ id, args: {} }), code: 'bad_request' },
  bad('unknown op', 'pchase.triple', () => ({}), 'unknown_op'),
  bad('args not an object', 'pchase', () => [1, 2]),
  bad('args null', 'calibrate', () => null),
  bad('hello args not an object', 'hello', () => []),
  // Device-free fields.
  bad('zero array', 'pchase', () => ({ ...chase, arrayBytes: 0 })),
  bad('negative array', 'pchase', () => ({ ...chase, arrayBytes: -4096 })),
  bad('non-integer array', 'pchase', () => ({ ...chase, arrayBytes: 4096.5 })),
  bad('array not a multiple of 4', 'pchase', () => ({ ...chase, arrayBytes: 4098 })),
  bad('array as a string', 'pchase', () => ({ ...chase, arrayBytes: '4096' })),
  bad('missing array', 'pchase', () => ({ ...chase, arrayBytes: undefined })),
  bad('stride 0', 'pchase', () => ({ ...chase, strideBytes: 0 })),
  bad('stride 3', 'pchase', () => ({ ...chase, strideBytes: 3 })),
  bad('stride not a multiple of 4', 'pchase', () => ({ ...chase, strideBytes: 66 })),
  bad('stride larger than the array', 'pchase', () => ({ ...chase, strideBytes: 8192 })),
  bad('missing stride', 'pchase', () => ({ ...chase, strideBytes: undefined })),
  bad('samples 0', 'pchase', () => ({ ...chase, samples: 0 })),
  bad('samples one over the limit', 'pchase', () => ({ ...chase, samples: MAX_SAMPLES + 1 })),
  bad('samples 1,000,001', 'pchase', () => ({ ...chase, samples: 1_000_001 })),
  bad('fractional samples', 'pchase', () => ({ ...chase, samples: 1.5 })),
  bad('missing samples', 'pchase', () => ({ ...chase, samples: undefined })),
  bad('unknown space', 'pchase', () => ({ ...chase, space: 'global.cs' })),
  bad('unknown pattern', 'pchase', () => ({ ...chase, pattern: 'zigzag' })),
  bad('warmup not a boolean', 'pchase', () => ({ ...chase, warmup: 'yes' })),
  bad('negative seed', 'pchase', () => ({ ...chase, seed: -1 })),
  bad('seed beyond 32 bits', 'pchase', () => ({ ...chase, seed: 2 ** 32 })),
  bad('batch without sizes', 'pchase.batch', () => ({ ...chase, arrayBytes: undefined })),
  bad('empty batch', 'pchase.batch', () => ({ ...chase, arrayBytes: undefined, arrayBytesList: [] })),
  bad('batch with a negative size', 'pchase.batch', () => ({ ...chase, arrayBytes: undefined, arrayBytesList: [4096, -4] })),
  bad('batch size below the stride', 'pchase.batch', () => ({ ...chase, arrayBytes: undefined, arrayBytesList: [4096, 32] })),
  bad('pair without second', 'pchase.pair', () => ({ first: chaser, placement: 'same-sm', samples: 16 })),
  bad('pair with stride 3', 'pchase.pair', () => ({
    first: chaser,
    second: { ...chaser, strideBytes: 3 },
    placement: 'same-sm',
    samples: 16,
  })),
  bad('pair with unknown placement', 'pchase.pair', () => ({ first: chaser, second: chaser, placement: 'far', samples: 16 })),
  bad('pair with samples 0', 'pchase.pair', () => ({ first: chaser, second: chaser, placement: 'same-sm', samples: 0 })),
  bad('bandwidth with unknown mode', 'bandwidth', () => ({ ...bandwidth, mode: 'copy' })),
  bad('bandwidth array not a multiple of 16', 'bandwidth', () => ({ ...bandwidth, arrayBytes: 4100 })),
  bad('bandwidth with 0 blocks', 'bandwidth', () => ({ ...bandwidth, blocks: 0 })),
  bad('bandwidth with too many blocks', 'bandwidth', () => ({ ...bandwidth, blocks: 2 ** 20 + 1 })),
  bad('bandwidth repetitions 0', 'bandwidth', () => ({ ...bandwidth, repetitions: 0 })),
  bad('bandwidth repetitions 1001', 'bandwidth', () => ({ ...bandwidth, repetitions: 1001 })),
  bad('bandwidth passes 0', 'bandwidth', () => ({ ...bandwidth, passes: 0 })),
  bad('bandwidth passes 4097', 'bandwidth', () => ({ ...bandwidth, passes: 4097 })),
  bad('bandwidth fractional passes', 'bandwidth', () => ({ ...bandwidth, passes: 2.5 })),
  bad('bandwidth launch beyond 2^40 bytes', 'bandwidth', () => ({ ...bandwidth, arrayBytes: 2 ** 30, passes: 1025 })),
  bad('bandwidth with unknown cacheHint', 'bandwidth', () => ({ ...bandwidth, cacheHint: 'cs' })),
  bad('bandwidth cacheHint not a string', 'bandwidth', () => ({ ...bandwidth, cacheHint: 1 })),
  bad('bandwidth write with cacheHint cg', 'bandwidth', () => ({ ...bandwidth, mode: 'write', cacheHint: 'cg' })),
  bad('copy without an array', 'bandwidth.copy', () => ({ repetitions: 2 })),
  bad('copy array not a multiple of 16', 'bandwidth.copy', () => ({ arrayBytes: 4100, repetitions: 2 })),
  bad('copy repetitions 0', 'bandwidth.copy', () => ({ arrayBytes: 1 << 20, repetitions: 0 })),
  bad('copy args not an object', 'bandwidth.copy', () => [1]),
  bad('calibrate samples 0', 'calibrate', () => ({ samples: 0 })),
  bad('calibrate samples 1,000,001', 'calibrate', () => ({ samples: 1_000_001 })),
  // Chase launch settings (ChaseLaunchArgs) and selftest.consumer (pchase's rules).
  bad('flushL2 not a boolean', 'pchase', () => ({ ...chase, flushL2: 'yes' })),
  bad('batch flushL2 as a number', 'pchase.batch', () => ({ ...chase, arrayBytes: undefined, arrayBytesList: [4096], flushL2: 1 })),
  bad('carveoutPercent above 100', 'pchase', () => ({ ...chase, carveoutPercent: 101 })),
  bad('negative carveoutPercent', 'pchase.batch', () => ({ ...chase, arrayBytes: undefined, arrayBytesList: [4096], carveoutPercent: -1 })),
  bad('fractional carveoutPercent on a pair', 'pchase.pair', () => ({
    first: chaser,
    second: chaser,
    placement: 'same-sm',
    samples: 16,
    carveoutPercent: 50.5,
  })),
  bad('self-test with an unknown space', 'selftest.consumer', () => ({ ...chase, space: 'global.cs' })),
  bad('self-test with samples 0', 'selftest.consumer', () => ({ ...chase, samples: 0 })),
  bad('self-test with flushL2 a string', 'selftest.consumer', () => ({ ...chase, flushL2: 'no' })),
  bad('self-test carveoutPercent above 100', 'selftest.consumer', () => ({ ...chase, carveoutPercent: 200 })),
  // Compute and thread block clusters (issue 10).
  bad('placement cluster size 0', 'compute.smid', () => ({ ...smid, clusterSize: 0 })),
  bad('placement cluster size 17', 'compute.smid', () => ({ ...smid, clusterSize: 17 })),
  bad('placement without clusters', 'compute.smid', () => ({ ...smid, clusters: 0 })),
  bad('placement repetitions 65', 'compute.smid', () => ({ ...smid, repetitions: 65 })),
  bad('cluster limits args not an object', 'cluster.limits', () => [1]),
  bad('cluster sync samples 0', 'cluster.sync', () => ({ ...clusterSync, samples: 0 })),
  bad('cluster sync without a size', 'cluster.sync', () => ({ ...clusterSync, clusterSize: undefined })),
  bad('DSMEM transfer not a multiple of 8', 'cluster.dsmem', () => ({ ...dsmem, transferBytes: 1028 })),
  bad('DSMEM transfer beyond 1 MiB', 'cluster.dsmem', () => ({ ...dsmem, transferBytes: 2 ** 20 + 8 })),
  bad('DSMEM repetitions 0', 'cluster.dsmem', () => ({ ...dsmem, repetitions: 0 })),
  bad('cluster launch blocks not a multiple of the size', 'cluster.launch', () => ({ ...clusterLaunch, blocks: 66 })),
  bad('cluster launch spin over 1 ms', 'cluster.launch', () => ({ ...clusterLaunch, spinNs: 1_000_001 })),
  // L2 partitions (issue 9).
  bad('partition without a mode', 'l2.partition', () => ({})),
  bad('partition with an unknown mode', 'l2.partition', () => ({ mode: 'both' })),
  bad('partition array not a multiple of 4', 'l2.partition', () => ({ mode: 'shared', arrayBytes: 4098 })),
  bad('partition stride beyond 1 MiB', 'l2.partition', () => ({ mode: 'shared', arrayBytes: 2 ** 22, strideBytes: 2 ** 20 + 4 })),
  bad('partition stride larger than the array', 'l2.partition', () => ({ mode: 'shared', arrayBytes: 1024, strideBytes: 2048 })),
  bad('partition with more chunks than latencies buffered', 'l2.partition', () => ({
    mode: 'shared',
    arrayBytes: (MAX_SAMPLES + 1) * 256,
    strideBytes: 256,
  })),
  bad('pair on one chosen SM twice', 'pchase.pair', () => ({
    first: chaser,
    second: chaser,
    placement: 'different-sm',
    smIds: [2, 2],
    samples: 16,
  })),
  bad('pair on three chosen SMs', 'pchase.pair', () => ({
    first: chaser,
    second: chaser,
    placement: 'different-sm',
    smIds: [0, 1, 2],
    samples: 16,
  })),
  bad('same-sm pair on chosen SMs', 'pchase.pair', () => ({
    first: chaser,
    second: { ...chaser, warp: 1 },
    placement: 'same-sm',
    smIds: [0, 6],
    samples: 16,
  })),
  bad('farnear without smIds', 'l2.farnear', () => ({ ...farnear, smIds: undefined })),
  bad('farnear with three SMs', 'l2.farnear', () => ({ ...farnear, smIds: [0, 1, 2] })),
  bad('farnear with one SM twice', 'l2.farnear', () => ({ ...farnear, smIds: [3, 3] })),
  bad('farnear with a negative SM id', 'l2.farnear', () => ({ ...farnear, smIds: [-1] })),
  bad('farnear array not whole 128 B lines', 'l2.farnear', () => ({ ...farnear, arrayBytes: 4096 + 64 })),
  bad('farnear stride not whole lines', 'l2.farnear', () => ({ ...farnear, strideBytes: 192 })),
  bad('farnear with more chunks than latencies buffered', 'l2.farnear', () => ({
    ...farnear,
    arrayBytes: (MAX_SAMPLES + 1) * 256,
    strideBytes: 256,
  })),
  bad('farnear with one pass', 'l2.farnear', () => ({ ...farnear, passes: 1 })),
  bad('farnear without shared', 'l2.farnear', () => ({ ...farnear, shared: undefined })),
  bad('persist without a window', 'l2.persist', () => ({ ...persist, windowBytes: undefined })),
  bad('persist window larger than the array', 'l2.persist', () => ({ ...persist, windowBytes: persist.arrayBytes * 2 })),
  bad('persist hit ratio 0', 'l2.persist', () => ({ ...persist, hitRatio: 0 })),
  bad('persist hit ratio above 1', 'l2.persist', () => ({ ...persist, hitRatio: 1.5 })),
  bad('persist with no samples', 'l2.persist', () => ({ ...persist, samples: 0 })),
  bad('traffic by an unknown method', 'traffic', () => ({ ...traffic, method: 'guess' })),
  bad('traffic footprint not a multiple of 16', 'traffic', () => ({ ...traffic, footprintBytes: (1 << 20) + 4 })),
  bad('traffic with no cases', 'traffic', () => ({ ...traffic, cases: [] })),
  bad('traffic case not an object', 'traffic', () => ({ ...traffic, cases: [7] })),
  bad('traffic case of an unknown pattern', 'traffic', () => ({ ...traffic, cases: [{ ...trafficCase, pattern: 'scatter' }] })),
  bad('traffic element of 12 bytes', 'traffic', () => ({ ...traffic, cases: [{ ...trafficCase, elementBytes: 12 }] })),
  bad('traffic stride 0', 'traffic', () => ({ ...traffic, cases: [{ ...trafficCase, strideElements: 0 }] })),
  bad('traffic stride past the footprint', 'traffic', () => ({ ...traffic, cases: [{ ...trafficCase, strideElements: (1 << 18) + 1 }] })),
  bad('traffic target unknown', 'traffic', () => ({ ...traffic, cases: [{ ...trafficCase, target: 'stale' }] })),
  bad('traffic with no repetitions', 'traffic', () => ({ ...traffic, repetitions: 0 })),
  bad('traffic metric name with capitals', 'traffic', () => ({ ...traffic, method: 'counters', metrics: ['DRAM__bytes'] })),
  bad('traffic fetch limit of 48 bytes', 'traffic', () => ({ ...traffic, l2FetchGranularityBytes: 48 })),
  // Device limits.
  device('SM out of range', 'pchase', (d) => ({ ...chase, smId: d.multiprocessorCount })),
  device('self-test SM out of range', 'selftest.consumer', (d) => ({ ...chase, smId: d.multiprocessorCount })),
  device('more batch sizes than SMs', 'pchase.batch', (d) => ({ ...chase, arrayBytesList: Array(d.multiprocessorCount + 1).fill(4096) })),
  device('constant array beyond the constant limit', 'pchase', (d) => ({ ...chase, space: 'constant', arrayBytes: constLimit(d) + 4 })),
  device('constant arrays of a batch beyond the constant limit together', 'pchase.batch', (d) => ({
    ...chase,
    space: 'constant',
    arrayBytesList: [down(constLimit(d) * 0.6, 4), down(constLimit(d) * 0.6, 4)],
  })),
  device('shared array beyond the shared limit', 'pchase', (d) => ({ ...chase, space: 'shared', arrayBytes: sharedLimit(d) + 4 })),
  device('shared array plus sample buffers beyond the shared limit', 'pchase', (d) => ({
    ...chase,
    space: 'shared',
    arrayBytes: sharedLimit(d) - 1024,
    samples: MAX_SAMPLES,
  })),
  device('pair lane out of range', 'pchase.pair', (d) => ({
    first: { ...chaser, lane: d.warpSize },
    second: chaser,
    placement: 'same-sm',
    samples: 16,
  })),
  device('same-sm pair on one warp and lane', 'pchase.pair', () => ({
    first: chaser,
    second: { ...chaser, warp: 0 },
    placement: 'same-sm',
    samples: 16,
  })),
  device('pair on an SM id the device lacks', 'pchase.pair', (d) => ({
    first: chaser,
    second: chaser,
    placement: 'different-sm',
    smIds: [0, d.multiprocessorCount],
    samples: 16,
  })),
  device('farnear on an SM id the device lacks', 'l2.farnear', (d) => ({ ...farnear, smIds: [0, d.multiprocessorCount] })),
  device('bandwidth with too many threads', 'bandwidth', (d) => ({ ...bandwidth, threadsPerBlock: d.maxThreadsPerBlock + 1 })),
  device('placement with more blocks than SMs', 'compute.smid', (d) => ({ ...smid, clusterSize: 1, clusters: d.multiprocessorCount + 1 })),
  device('cluster sync with too many threads', 'cluster.sync', (d) => ({ ...clusterSync, threadsPerBlock: d.maxThreadsPerBlock + 1 })),
  device('DSMEM transfer beyond the shared limit', 'cluster.dsmem', (d) => ({ ...dsmem, transferBytes: down(sharedLimit(d), 8) })),
  // Memory and capability.
  device(
    'array larger than device memory',
    'pchase',
    (d) => ({ ...chase, space: 'global.cg', arrayBytes: down(d.totalMemoryBytes * 2, 4) }),
    'out_of_memory',
  ),
  device(
    'batch arrays larger than device memory together',
    'pchase.batch',
    (d) => ({
      ...chase,
      space: 'global.cg',
      arrayBytesList: [down(d.totalMemoryBytes * 0.6, 4), down(d.totalMemoryBytes * 0.6, 4)],
    }),
    'out_of_memory',
  ),
  device(
    'pair arrays larger than device memory together',
    'pchase.pair',
    (d) => {
      const half = { space: 'global.cg', arrayBytes: down(d.totalMemoryBytes * 0.6, 4), strideBytes: 4096 };
      return { first: half, second: half, placement: 'same-sm', samples: 16 };
    },
    'out_of_memory',
  ),
  device(
    'private partition arrays larger than device memory together',
    'l2.partition',
    (d) => ({
      mode: 'private',
      arrayBytes: down((d.totalMemoryBytes * 2) / d.multiprocessorCount, 1024 * 1024),
      strideBytes: 1024 * 1024,
    }),
    'out_of_memory',
  ),
  device(
    'persist array larger than device memory',
    'l2.persist',
    (d) => ({ ...persist, arrayBytes: down(d.totalMemoryBytes * 2, 128) }),
    'out_of_memory',
  ),
  device(
    'traffic arrays larger than device memory together',
    'traffic',
    (d) => ({ ...traffic, footprintBytes: down(d.totalMemoryBytes * 0.4, 16) }),
    'out_of_memory',
  ),
  device(
    'bandwidth array larger than device memory',
    'bandwidth',
    (d) => ({ ...bandwidth, arrayBytes: down(d.totalMemoryBytes * 2, 16) }),
    'out_of_memory',
  ),
  device(
    'copy of more than half the device memory (source and target)',
    'bandwidth.copy',
    (d) => ({ arrayBytes: down(d.totalMemoryBytes * 0.6, 16), repetitions: 1 }),
    'out_of_memory',
  ),
  device(
    'chain beyond 32-bit element indices',
    'pchase',
    () => ({ ...chase, space: 'global.cg', arrayBytes: MAX_CHAIN_BYTES + 4, strideBytes: 4096 }),
    'unsupported',
  ),
  device(
    'texture beyond the linear texture limit',
    'pchase',
    () => ({ ...chase, space: 'texture', arrayBytes: (MAX_TEXTURE_ELEMENTS + 1) * 4, strideBytes: 4096 }),
    'unsupported',
  ),
];

const GOOD_CHASE = (id: number) => JSON.stringify({ id, op: 'pchase', args: chase });
const GOOD_HELLO = (id: number) => JSON.stringify({ id, op: 'hello', args: {} });

interface Answered {
  name: string;
  id: unknown;
  code: string | null;
}

/** Sends every row, each followed by a good request; returns each row's answer and checks each good request succeeded. */
async function answerTable(
  limits: Limits,
  good: (id: number) => string,
  send: (lines: string[]) => ReturnType<typeof exchange>,
): Promise<Answered[]> {
  const lines = ROWS.flatMap((row, i) => [row.line(limits, 1000 + i), good(2000 + i)]);
  const { responses, exitCode, stderr } = await send(lines);
  expect(exitCode, stderr).toBe(0);
  expect(responses).toHaveLength(lines.length);
  const goodAnswers = responses.filter((_, k) => k % 2 === 1).map((r) => [r.id, r.ok]);
  expect(goodAnswers).toEqual(ROWS.map((_, i) => [2000 + i, true]));
  return ROWS.map((row, i) => {
    const r = responses[2 * i]!;
    expect(r.ok, row.name).toBe(false);
    return { name: row.name, id: r.id, code: (r.error as { code?: string } | undefined)?.code ?? null };
  });
}

function expected(answerOf: (row: Row) => ProbeErrorCode): Answered[] {
  return ROWS.map((row, i) => ({ name: row.name, id: row.nullId ? null : 1000 + i, code: answerOf(row) }));
}

const simLimits: Limits = GPU_MODELS[SIM_MODEL]!.device;
const simAnswers = () => answerTable(simLimits, GOOD_CHASE, (lines) => exchange(lines, process.env, process.execPath, SIM_ARGS));

describe('hello ops contract: simulated GPU and native probe', () => {
  const helloOps = async (send: (lines: string[]) => ReturnType<typeof exchange>) =>
    ((await send([GOOD_HELLO(1)])).responses[0]?.result as { ops?: string[] } | undefined)?.ops;

  it('the simulated GPU lists every protocol op', async () => {
    expect([...((await helloOps((lines) => exchange(lines, process.env, process.execPath, SIM_ARGS))) ?? [])].sort()).toEqual(
      [...PROBE_OPS].sort(),
    );
  }, 60_000);

  it.skipIf(!probeBuilt)(
    `the native probe lists the same ops as the simulated GPU (${probeBuilt ? PROBE_PATH : 'skipped: probe not built'})`,
    async () => {
      const [native, sim] = await Promise.all([
        helloOps((lines) => exchange(lines)),
        helloOps((lines) => exchange(lines, process.env, process.execPath, SIM_ARGS)),
      ]);
      expect(native).toBeDefined();
      expect([...native!].sort()).toEqual([...sim!].sort());
    },
    60_000,
  );
});

describe('request validation contract: simulated GPU and native probe', () => {
  it('the simulated GPU answers every bad request with the contract code and keeps serving', async () => {
    expect(await simAnswers()).toEqual(expected((row) => row.code));
  }, 60_000);

  describe.skipIf(!probeBuilt)(
    `native probe (${probeBuilt ? PROBE_PATH : `skipped: ${PROBE_PATH} not built (npm run build:probe)`})`,
    () => {
      it(hasGpu
        ? 'answers every row with the same code as the simulated GPU and keeps serving'
        : 'without a GPU: same code as the simulated GPU for every device-free row, unsupported for rows needing device limits, and keeps serving', async () => {
        const hello = await exchange([GOOD_HELLO(1)]);
        const devices = (hello.responses[0]?.result as { devices?: DeviceProperties[] } | undefined)?.devices ?? [];
        const probeDevice = devices[0];
        // On a GPU machine the full comparison must run, not the device-free subset.
        if (hasGpu) expect(probeDevice, 'a GPU is present (/dev/nvidia0) but the probe sees no device').toBeDefined();
        const probeAnswers = await answerTable(probeDevice ?? simLimits, probeDevice ? GOOD_CHASE : GOOD_HELLO, (lines) => exchange(lines));
        const sim = await simAnswers();
        if (probeDevice) {
          expect(probeAnswers).toEqual(sim);
        } else {
          expect(probeAnswers).toEqual(expected((row) => (row.needsDevice ? 'unsupported' : row.code)));
          const deviceFree = (answers: Answered[]) => answers.filter((_, i) => !ROWS[i]!.needsDevice);
          expect(deviceFree(probeAnswers)).toEqual(deviceFree(sim));
        }
      }, 120_000);
    },
  );
});
