import { describe, expect, it } from 'vitest';
import type { ProbeChannel } from '../../../server/gpu/backend.js';
import { ProbeError } from '../../../server/protocol/probe-error.js';
import type { ComputeSmidResult } from '../../../server/protocol/ops.js';
import { GPU_MODELS, SimulatedBackend, type GpuModel } from '../../../server/gpu/sim/index.js';
import { gpcMapFromTpcs } from '../../../server/gpu/sim/models/nvidia-common.js';

const H100 = GPU_MODELS['h100-sxm5-80gb']!;
const A100 = GPU_MODELS['a100-40gb']!;

async function open(model: GpuModel): Promise<ProbeChannel> {
  const backend = new SimulatedBackend({ models: [model.id], seed: 9 });
  const [gpu] = await backend.listDevices();
  return backend.open(gpu!);
}

async function refusal(channel: ProbeChannel, op: string, args: unknown): Promise<{ code: string; message: string }> {
  const error = await channel.request(op as never, args as never).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, `${op} ${JSON.stringify(args)}`).toBeInstanceOf(ProbeError);
  return { code: (error as ProbeError).code, message: (error as ProbeError).message };
}

const smid = { clusterSize: 2, clusters: 4, repetitions: 1 };
const sync = { clusterSize: 2, threadsPerBlock: 32, samples: 16 };
const dsmem = { samples: 16, transferBytes: 1024, threadsPerBlock: 32, repetitions: 2 };
const launch = { clusterSize: 4, blocks: 64, spinNs: 1000, repetitions: 2 };

const refused: Array<[string, string, unknown, string]> = [
  ['cluster size 0', 'compute.smid', { ...smid, clusterSize: 0 }, 'bad_request'],
  ['cluster size 17', 'cluster.sync', { ...sync, clusterSize: 17 }, 'bad_request'],
  ['no clusters', 'compute.smid', { ...smid, clusters: 0 }, 'bad_request'],
  ['65 repetitions of a placement', 'compute.smid', { ...smid, repetitions: 65 }, 'bad_request'],
  ['more blocks than SMs', 'compute.smid', { ...smid, clusterSize: 16, clusters: 9 }, 'bad_request'],
  ['limits args not an object', 'cluster.limits', [], 'bad_request'],
  ['sync samples 0', 'cluster.sync', { ...sync, samples: 0 }, 'bad_request'],
  ['sync with too many threads', 'cluster.sync', { ...sync, threadsPerBlock: 1025 }, 'bad_request'],
  ['transfer not a multiple of 8', 'cluster.dsmem', { ...dsmem, transferBytes: 1028 }, 'bad_request'],
  ['transfer beyond the shared limit', 'cluster.dsmem', { ...dsmem, transferBytes: 227 * 1024 }, 'bad_request'],
  ['transfer beyond 1 MiB', 'cluster.dsmem', { ...dsmem, transferBytes: 2 ** 20 + 8 }, 'bad_request'],
  ['launch blocks not a multiple of the cluster', 'cluster.launch', { ...launch, blocks: 66 }, 'bad_request'],
  ['launch spin over 1 ms', 'cluster.launch', { ...launch, spinNs: 1_000_001 }, 'bad_request'],
  ['launch repetitions 101', 'cluster.launch', { ...launch, repetitions: 101 }, 'bad_request'],
];

describe('compute ops on the simulated H100', () => {
  it.each(refused)('refuses %s', async (_, op, args, code) => {
    expect((await refusal(await open(H100), op, args)).code).toBe(code);
  });

  it('places a plain launch on every SM once, and every cluster inside one GPC', async () => {
    const channel = await open(H100);
    const census = await channel.request('compute.smid', { clusterSize: 1, clusters: 132, repetitions: 1 });
    expect([...census.launches[0]!.smIds].sort((a, b) => a - b)).toEqual(H100.compute.gpcOfSm.map((_, sm) => sm));
    // 7 GPCs hold a cluster of 16 at once (the model's 8th has 8 SMs): 7 clusters are co-resident, an 8th waits.
    for (const [clusters, coResidentExpected] of [
      [7, true],
      [8, false],
    ] as const) {
      const placed: ComputeSmidResult = await channel.request('compute.smid', { clusterSize: 16, clusters, repetitions: 2 });
      for (const { smIds, coResident } of placed.launches) {
        expect(coResident).toBe(coResidentExpected);
        expect(smIds).toHaveLength(16 * clusters);
        if (coResidentExpected) expect(new Set(smIds).size).toBe(16 * clusters);
        for (let c = 0; c < clusters; c += 1)
          expect(new Set(smIds.slice(16 * c, 16 * c + 16).map((sm) => H100.compute.gpcOfSm[sm])).size).toBe(1);
      }
    }
  });

  it('reports the cluster limits and one active-cluster count per size', async () => {
    const backend = new SimulatedBackend({ models: [H100.id], seed: 1 });
    const [gpu] = await backend.listDevices();
    const channel = await backend.open(gpu!);
    const limits = await channel.request('cluster.limits', {});
    expect(limits).toMatchObject({ maxPortableClusterSize: 8, maxClusterSize: 16 });
    expect(limits.activeClusters).toHaveLength(16);
  });
});

describe('compute ops on the simulated A100', () => {
  it('answers a plain placement, and unsupported with the reason for everything clustered', async () => {
    const channel = await open(A100);
    const census = await channel.request('compute.smid', { clusterSize: 1, clusters: 108, repetitions: 1 });
    expect(new Set(census.launches[0]!.smIds).size).toBe(108);
    const reason = 'thread block clusters need compute capability 9.0 or newer; this device is sm_80';
    for (const [op, args] of [
      ['compute.smid', smid],
      ['cluster.limits', {}],
      ['cluster.sync', sync],
      ['cluster.dsmem', dsmem],
      ['cluster.launch', launch],
    ] as const) {
      expect(await refusal(channel, op, args)).toEqual({ code: 'unsupported', message: reason });
    }
  });
});

describe('the models’ SM -> GPC maps', () => {
  it('deal TPCs to GPCs in turn, then the TPCs kept apart; GPCs of unequal size on the H100-like model', () => {
    expect(gpcMapFromTpcs([2, 1])).toEqual([0, 0, 1, 1, 0, 0]);
    expect(gpcMapFromTpcs([2, 1], 2)).toEqual([0, 0, 1, 1, 0, 0, 2, 2, 3, 3]);
    expect(H100.compute.gpcOfSm).toHaveLength(H100.device.multiprocessorCount);
    expect(A100.compute.gpcOfSm).toHaveLength(A100.device.multiprocessorCount);
    const sizes = new Map<number, number>();
    for (const gpc of H100.compute.gpcOfSm) sizes.set(gpc, (sizes.get(gpc) ?? 0) + 1);
    expect([...sizes.values()].sort((a, b) => b - a)).toEqual([18, 18, 16, 16, 16, 16, 16, 8, 2, 2, 2, 2]);
  });
});
