/**
 * The merged topology a client gets: the stored probe result (static, measured
 * once) + the GPU's probe status + the stable part of the live NVML state + the
 * MIG view. Volatile readings (memory used, read time) stay out, so the ETag
 * changes only when something a scheduler cares about changes.
 */
import type { NvmlDeviceState } from '../dynamic/types.js';
import type { GpuSummary } from './../model/gpu.js';
import type {
  DynamicState,
  ElementName,
  MeasuredValue,
  MigInstanceTopologyDocument,
  MigView,
  ResultDocument,
  TopologyElements,
  TopologyStatus,
} from '../model/document.js';
import { buildMigView } from './mig.js';

export interface DynamicPart {
  available: boolean;
  reason: string | null;
  driverVersion: string | null;
  device: NvmlDeviceState | null;
}

export function stableDynamic(part: DynamicPart): DynamicState {
  const d = part.device;
  return {
    available: part.available,
    reason: part.reason,
    driverVersion: part.driverVersion,
    device: d && {
      serial: d.serial,
      pciBusId: d.pciBusId,
      architecture: d.architecture,
      memoryTotalBytes: d.memory?.totalBytes ?? null,
      bar1TotalBytes: d.bar1?.totalBytes ?? null,
      maxClocks: d.maxClocks,
      memoryBusWidthBits: d.memoryBusWidthBits,
      pcie: { maxGen: d.pcie.maxGen, maxWidth: d.pcie.maxWidth },
      numaNode: d.numaNode,
      cpuAffinity: d.cpuAffinity,
      nvlinks: d.nvlinks,
      degraded: d.degraded,
    },
  };
}

export function l2Sizes(result: ResultDocument | null): { l2SizeBytes: number | null; l2SegmentBytes: number | null } {
  const l2 = result?.elements.l2;
  return { l2SizeBytes: l2?.size?.value ?? result?.device.l2CacheSizeBytes ?? null, l2SegmentBytes: l2?.segmentSize?.value ?? null };
}

export function migViewFor(result: ResultDocument | null, device: NvmlDeviceState | null): MigView | null {
  return device
    ? buildMigView({
        device,
        ...l2Sizes(result),
        l2PartitionCount: result?.elements.l2?.partitions?.count ?? null,
        compute: result?.compute ?? null,
      })
    : null;
}

export interface StatusPart {
  summary: GpuSummary;
  jobUrl: string | null;
}

/**
 * The whole-GPU document: the stored result plus status, stable live state and
 * the MIG view. Checked identical to the served schema's type
 * (GpuTopologyDocument) in ./document-contract.ts.
 */
export type MergedTopology = ResultDocument & {
  status: TopologyStatus;
  dynamic: DynamicState;
  mig: MigView | null;
};

export function mergeTopology(result: ResultDocument, status: StatusPart, dynamic: DynamicPart): MergedTopology {
  return {
    ...result,
    // Documents stored before schema 3 have no carveout record: served as "not recorded" until a re-analysis rebuilds them.
    carveout: result.carveout ?? null,
    status: {
      probeStatus: status.summary.probe.status,
      stale: status.summary.probe.stale,
      staleReason: status.summary.probe.staleReason,
      activeJob: status.jobUrl,
      present: status.summary.present,
    },
    dynamic: stableDynamic(dynamic),
    mig: migViewFor(result, dynamic.device),
  };
}

/** Per-SM caches an instance keeps whole: a MIG slice gets whole SMs, so these come from the parent's probe. */
const PER_SM_ELEMENTS: ElementName[] = ['l1', 'texture', 'readOnly', 'constantL1', 'constantL15', 'shared', 'vL1', 'sL1d', 'lds'];

/**
 * The view of one MIG device: its SMs, memory and L2 share, per-SM caches from
 * the parent's probe. Built from the parent's merged document, whose MIG view,
 * status and live state it shares.
 */
export function mergeMigInstance(parent: MergedTopology, migDeviceUuid: string): MigInstanceTopologyDocument | null {
  // Every compute instance of a GPU instance is a MIG device of its own; the GPU instance's UUID is its first.
  const instance = parent.mig?.instances.find(
    (i) => i.migDeviceUuid === migDeviceUuid || i.computeInstances.some((ci) => ci.migDeviceUuid === migDeviceUuid),
  );
  if (!instance) return null;
  const computeInstance = instance.computeInstances.find((ci) => ci.migDeviceUuid === migDeviceUuid) ?? null;
  const elements: TopologyElements = {};
  for (const name of PER_SM_ELEMENTS) {
    const element = parent.elements[name];
    if (element) elements[name] = element;
  }
  const parentL2 = parent.elements.l2;
  // The share says where its slice counts came from, here as in the parent's MIG view (one source wherever it appears).
  const l2Size: MeasuredValue | undefined =
    instance.l2.bytes === null ? undefined : { value: instance.l2.bytes, unit: 'bytes', source: instance.l2.source };
  elements.l2 = {
    ...(parentL2?.latency ? { latency: parentL2.latency } : {}),
    ...(parentL2?.lineSize ? { lineSize: parentL2.lineSize } : {}),
    ...(l2Size ? { size: l2Size } : {}),
  };
  const parentMemory = parent.elements.deviceMemory;
  elements.deviceMemory = {
    ...(parentMemory?.latency ? { latency: parentMemory.latency } : {}),
    ...(instance.memorySizeBytes !== null ? { size: { value: instance.memorySizeBytes, unit: 'bytes', source: 'nvml' } } : {}),
  };
  return {
    schemaVersion: parent.schemaVersion,
    kind: 'mig-instance',
    migDeviceUuid,
    parent: { uuid: parent.gpu.uuid, name: parent.gpu.name, probe: parent.probe, status: parent.status },
    simulated: parent.simulated,
    instance,
    computeInstance,
    elements,
    dynamic: parent.dynamic,
  };
}
