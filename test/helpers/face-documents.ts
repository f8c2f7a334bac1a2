/**
 * Topology documents for the faces' tests (metrics, picture, MT4G export,
 * fit advice), built by the real builders — never hand-written values:
 * - the recorded H100 run (test/fixtures/h100/discovery-run.json) re-analysed
 *   by the current analysis, merged with a fake-NVML MIG scenario;
 * - a simulated H100 discovery (slower: seconds), for every element the
 *   discovery measures today.
 */
import { readFileSync } from 'node:fs';
import { ANALYSIS_VERSION, reanalyse } from '../../server/discovery/index.js';
import type { NvmlDeviceState } from '../../server/dynamic/types.js';
import { buildResultDocument } from '../../server/results/result-document.js';
import type { RawSeries, ResultDocument } from '../../server/model/document.js';
import type { GpuSummary } from '../../server/model/gpu.js';
import type { TopologyLookup } from '../../server/model/topology-api.js';
import { mergeMigInstance, mergeTopology, type MergedTopology } from '../../server/topology/merge.js';
import { prepareDocument } from '../../server/topology/prepare.js';
import { FakeTopology, makeGpu } from '../integration/api/fake-topology.js';
import { deviceState, firstDevice, type DeviceOptions } from '../unit/dynamic/scenario-device.js';
import { SHARED_H100_SEED, simulatedDiscovery } from './simulated-discovery.js';

interface RecordedRun {
  metadata: { gpu: string; uuid: string; driverVersion: string; probeVersion: string; recordedAt: string; durationMs: number };
  raw: RawSeries[];
  document: { gpu: ResultDocument['gpu']; probe: { startedAt: string; finishedAt: string; jobId: string } };
}

export function recordedH100Run(): RecordedRun {
  return JSON.parse(readFileSync(new URL('../fixtures/h100/discovery-run.json', import.meta.url), 'utf8')) as RecordedRun;
}

/** The recorded H100 run as the current analysis reads it (a stored result as the daemon would serve it). */
export function recordedH100Result(): ResultDocument {
  const run = recordedH100Run();
  const outcome = reanalyse(run.raw);
  const gpu = run.document.gpu;
  return buildResultDocument(
    outcome,
    {
      gpu: { ...gpu, index: 0, driverVersion: run.metadata.driverVersion },
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

/** A simulated H100's full discovery (run once per test run and shared by every file: it takes seconds). */
export async function simulatedH100Result(): Promise<ResultDocument> {
  const { outcome, gpu, probeVersion, startedAt, finishedAt } = await simulatedDiscovery({
    model: 'h100-sxm5-80gb',
    seed: SHARED_H100_SEED,
  });
  return buildResultDocument(
    outcome,
    { gpu, simulated: true, probeVersion, analysisVersion: ANALYSIS_VERSION, jobId: 'job-sim', only: null, startedAt, finishedAt },
    null,
  );
}

/** A fake-NVML scenario's first device, renamed to the result's GPU (its MIG layout is what matters). */
export function scenarioDevice(result: ResultDocument, scenario: string, options: DeviceOptions = {}, index = 0): NvmlDeviceState {
  return { ...deviceState(firstDevice(scenario), options, index), uuid: result.gpu.uuid };
}

export interface MergedGpu {
  summary: GpuSummary;
  merged: MergedTopology;
  migUuids: string[];
}

/** The whole-GPU document as the service would merge it, with `scenario`'s MIG layout (null: no NVML). */
export function mergedGpu(result: ResultDocument, scenario: string | null, index = 0, summary: Partial<GpuSummary> = {}): MergedGpu {
  const device = scenario === null ? null : scenarioDevice(result, scenario, {}, index);
  const migUuids = device ? device.mig.instances.flatMap((i) => (i.migDeviceUuid ? [i.migDeviceUuid] : [])) : [];
  const gpu = makeGpu({
    uuid: result.gpu.uuid,
    name: result.gpu.name,
    index,
    pciBusId: result.gpu.pciBusId,
    simulated: result.simulated,
    migDeviceUuids: migUuids,
    ...summary,
  });
  const merged = mergeTopology(
    result,
    { summary: gpu, jobUrl: null },
    { available: device !== null, reason: device ? null : 'no NVML', driverVersion: device ? '580.95.05' : null, device },
  );
  return { summary: gpu, merged, migUuids };
}

/** A FakeTopology serving prepared documents by index, UUID and MIG UUID, as the service does. */
export class DocumentTopology extends FakeTopology {
  readonly documents = new Map<string, TopologyLookup>();

  constructor(gpus: MergedGpu[] = []) {
    super();
    this.gpus = [];
    for (const gpu of gpus) this.add(gpu);
  }

  add({ summary, merged, migUuids }: MergedGpu): void {
    this.gpus = [...this.gpus.filter((g) => g.uuid !== summary.uuid), summary];
    const ready: TopologyLookup = { kind: 'ready', document: prepareDocument(merged) };
    this.documents.set(String(summary.index), ready);
    this.documents.set(summary.uuid, ready);
    for (const uuid of migUuids) {
      const view = mergeMigInstance(merged, uuid);
      if (view) this.documents.set(uuid, { kind: 'ready', document: prepareDocument(view) });
    }
  }

  override getTopology(id: string): TopologyLookup {
    return this.documents.get(id) ?? super.getTopology(id);
  }
}
