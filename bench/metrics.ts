/**
 * `npm run bench:metrics` — how long GET /metrics takes to render with 8 GPUs,
 * each with 7 MIG GPU instances (H100 1g.10gb × 7): the recorded H100 result
 * re-analysed, merged with a 7-instance MIG layout built from fake NVML's
 * H100 profile table, served by an in-memory topology. Prints the first
 * render (documents parsed once) and the steady state (median, p99, max of
 * BENCH_RENDERS renders, default 500), through prom-client directly and
 * through the HTTP route (app.inject), the series count and the machine.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { buildApp } from '../server/app.js';
import { inertTopology } from '../server/api/inert-topology.js';
import { ANALYSIS_VERSION, reanalyse } from '../server/discovery/index.js';
import type { MigInstanceInfo, MigProfileInfo, NvmlDeviceState } from '../server/dynamic/types.js';
import { TopodMetrics } from '../server/faces/metrics.js';
import { buildResultDocument } from '../server/results/result-document.js';
import type { RawSeries, ResultDocument } from '../server/model/document.js';
import type { GpuSummary } from '../server/model/gpu.js';
import type { TopologyLookup } from '../server/model/topology-api.js';
import { mergeTopology } from '../server/topology/merge.js';
import { prepareDocument } from '../server/topology/prepare.js';

const GPUS = 8;
const INSTANCES = 7;
const RENDERS = Number(process.env['BENCH_RENDERS'] ?? 500);
const MIB = 1024 * 1024;

interface ScenarioProfile {
  id: number;
  name: string;
  sliceCount: number;
  instanceCount: number;
  multiprocessorCount: number;
  memorySizeMB: number;
  copyEngineCount: number;
  placements: Array<{ start: number; size: number }>;
}

function recordedResult(): ResultDocument {
  const run = JSON.parse(readFileSync(new URL('../test/fixtures/h100/discovery-run.json', import.meta.url), 'utf8')) as {
    metadata: { driverVersion: string; probeVersion: string };
    raw: RawSeries[];
    document: { gpu: ResultDocument['gpu']; probe: { startedAt: string; finishedAt: string; jobId: string } };
  };
  return buildResultDocument(
    reanalyse(run.raw),
    {
      gpu: { ...run.document.gpu, index: 0, driverVersion: run.metadata.driverVersion },
      simulated: false,
      probeVersion: run.metadata.probeVersion,
      analysisVersion: ANALYSIS_VERSION,
      jobId: run.document.probe.jobId,
      only: null,
      startedAt: new Date(run.document.probe.startedAt),
      finishedAt: new Date(run.document.probe.finishedAt),
    },
    null,
  );
}

function sevenWayDevice(index: number, uuid: string): NvmlDeviceState {
  const scenario = JSON.parse(readFileSync(new URL('../test/fixtures/nvml/h100-80gb-mig-mixed.json', import.meta.url), 'utf8')) as {
    devices: Array<{ gpuInstanceProfiles: ScenarioProfile[] }>;
  };
  const profiles: MigProfileInfo[] = scenario.devices[0]!.gpuInstanceProfiles.map((p, profileIndex) => ({
    id: p.id,
    profileIndex,
    name: p.name,
    sliceCount: p.sliceCount,
    instanceCount: p.instanceCount,
    multiprocessorCount: p.multiprocessorCount,
    memorySizeBytes: p.memorySizeMB * MIB,
    copyEngineCount: p.copyEngineCount,
    placements: p.placements,
  }));
  const smallest = [...profiles].sort((a, b) => a.sliceCount - b.sliceCount)[0]!;
  const instances: MigInstanceInfo[] = Array.from({ length: INSTANCES }, (_, i) => ({
    gpuInstanceId: 7 + i,
    profileId: smallest.id,
    placement: { start: i, size: 1 },
    migDeviceUuid: `MIG-${String(index).padStart(8, '0')}-0000-4000-8000-${String(i).padStart(12, '0')}`,
    memorySizeBytes: smallest.memorySizeBytes,
    multiprocessorCount: smallest.multiprocessorCount,
    computeInstances: [{ id: 0, profileId: null, multiprocessorCount: smallest.multiprocessorCount }],
  }));
  return {
    index,
    uuid,
    name: 'NVIDIA H100 80GB HBM3',
    serial: null,
    pciBusId: null,
    architecture: 'hopper',
    memory: null,
    bar1: null,
    maxClocks: { smMHz: null, memoryMHz: null },
    memoryBusWidthBits: null,
    pcie: { currentGen: null, maxGen: null, currentWidth: null, maxWidth: null },
    numaNode: null,
    cpuAffinity: null,
    nvlinks: [],
    mig: { mode: { current: 1, pending: 1 }, profiles, instances },
    degraded: [],
  };
}

function stats(samples: number[]): { median: number; p99: number; max: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { median: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1]! };
}

const result = recordedResult();
const gpus: GpuSummary[] = [];
const documents = new Map<string, TopologyLookup>();
for (let index = 0; index < GPUS; index++) {
  const uuid = `GPU-${String(index).padStart(8, '0')}-1111-4222-8333-444444444444`;
  const device = sevenWayDevice(index, uuid);
  const summary: GpuSummary = {
    uuid,
    index,
    name: result.gpu.name,
    vendor: 'nvidia',
    pciBusId: null,
    driverVersion: result.probe.driverVersion,
    simulated: false,
    present: true,
    probe: { status: 'probed', stale: false, staleReason: null, lastResultAt: result.probe.finishedAt, activeJobId: null },
    migDeviceUuids: device.mig.instances.map((i) => i.migDeviceUuid!),
  };
  gpus.push(summary);
  const merged = mergeTopology(
    { ...result, gpu: { ...result.gpu, uuid } },
    { summary, jobUrl: null },
    { available: true, reason: null, driverVersion: '580.95.05', device },
  );
  const ready: TopologyLookup = { kind: 'ready', document: prepareDocument(merged) };
  documents.set(uuid, ready);
  documents.set(String(index), ready);
}
const topology = inertTopology({
  listGpus: () => gpus,
  getGpu: (id) => gpus.find((g) => g.uuid === id || String(g.index) === id) ?? null,
  getTopology: (id) => documents.get(id) ?? { kind: 'unknown' },
});

const metrics = new TopodMetrics({ topology });
let started = performance.now();
const first = await metrics.render();
const firstMs = performance.now() - started;
const series = first.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length;
const direct: number[] = [];
for (let i = 0; i < RENDERS; i++) {
  started = performance.now();
  await metrics.render();
  direct.push(performance.now() - started);
}
metrics.close();

const app = await buildApp({ config: { adminToken: null, bodyLimitBytes: 16384 }, topology, version: 'bench' });
await app.ready();
await app.inject({ method: 'GET', url: '/metrics' });
const route: number[] = [];
for (let i = 0; i < RENDERS; i++) {
  started = performance.now();
  const response = await app.inject({ method: 'GET', url: '/metrics' });
  route.push(performance.now() - started);
  if (response.statusCode !== 200) throw new Error(`/metrics answered ${response.statusCode}`);
}
await app.close();

const d = stats(direct);
const r = stats(route);
const f = (ms: number) => ms.toFixed(2).padStart(7);
console.log(
  `/metrics render, ${GPUS} GPUs × ${INSTANCES} MIG instances: ${series} series, ${(first.length / 1024).toFixed(0)} KiB; ${RENDERS} renders each`,
);
console.log('case                          first ms  median ms  p99 ms   max ms');
console.log(`prom-client render (direct)   ${f(firstMs)}   ${f(d.median)}  ${f(d.p99)}  ${f(d.max)}`);
console.log(`GET /metrics (app.inject)     ${'      -'}   ${f(r.median)}  ${f(r.p99)}  ${f(r.max)}`);
console.log(
  `machine: ${os.cpus()[0]?.model ?? 'unknown CPU'} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`,
);
