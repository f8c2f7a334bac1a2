/**
 * What topod adds to a GPU's object in hwloc's XML: hwloc info attributes
 * (name/value strings, as hwloc's own backends add NVIDIAUUID or
 * CUDAGlobalMemorySize). Every name starts with "Topod" and says its unit
 * (TopodL2SizeBytes, TopodL1LatencyCycles, TopodDeviceMemoryReadBandwidthBytesPerSecond),
 * so a tool reading the XML needs no table. Elements and attributes are read
 * from the document, whatever it holds. Pure.
 */
import type { ElementTopology, GpuTopologyDocument, MigL2Share, ValueUnit } from '../model/document.js';
import type { GpuProbeStatus } from '../model/gpu.js';
import { elementEntries, latencyAttributes, measuredAttributes } from './documents.js';

/** A GPU as the hwloc face sees it: who it is, where it sits, and its served document (null: not measured yet). */
export interface HwlocGpu {
  uuid: string;
  index: number;
  name: string;
  vendor: 'nvidia' | 'amd';
  pciBusId: string | null;
  numaNode: number | null;
  probeStatus: GpuProbeStatus;
  simulated: boolean;
  document: GpuTopologyDocument | null;
}

export type HwlocInfo = readonly [name: string, value: string];

const UNIT_SUFFIX: Record<ValueUnit, string> = {
  bytes: 'Bytes',
  cycles: 'Cycles',
  ns: 'Ns',
  'bytes/s': 'BytesPerSecond',
  count: '',
  hz: 'Hz',
};

const capitalised = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);

/** Deterministic number text: integers as they are, others to 6 significant digits, never an exponent below 1e21. */
export function infoNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(6)));
}

/** "derived from NVML placements" / "derived from memory size": the share is always computed (L2 × slices ÷ the GPU's slices); only where the slice count came from differs. */
export function l2ShareBasis(share: Pick<MigL2Share, 'source'>): string {
  return share.source === 'nvml' ? 'derived from NVML placements' : 'derived from memory size';
}

function elementInfo(element: string, topology: ElementTopology): HwlocInfo[] {
  const prefix = `Topod${capitalised(element)}`;
  const out: HwlocInfo[] = [];
  for (const [attribute, value] of measuredAttributes(topology)) {
    if (attribute === 'amount' && topology.amount) {
      // Per GPU, an element's amount is its segments (the L2's partitions as MT4G counts them); per SM, copies in each SM.
      out.push([`${prefix}${topology.amount.per === 'gpu' ? 'Segments' : 'PerSM'}`, infoNumber(value.value)]);
      continue;
    }
    out.push([`${prefix}${capitalised(attribute)}${UNIT_SUFFIX[value.unit]}`, infoNumber(value.value)]);
    if (value.bound) out.push([`${prefix}${capitalised(attribute)}Bound`, value.bound]);
  }
  for (const [attribute, latency] of latencyAttributes(topology)) {
    out.push([`${prefix}${capitalised(attribute)}Cycles`, infoNumber(latency.mean)]);
    if (latency.meanNs !== undefined) out.push([`${prefix}${capitalised(attribute)}Ns`, infoNumber(latency.meanNs)]);
  }
  if (topology.sharedWith && topology.sharedWith.length > 0) out.push([`${prefix}SharesCacheWith`, topology.sharedWith.join(',')]);
  const partitions = topology.partitions;
  if (partitions) {
    out.push([`${prefix}Partitions`, String(partitions.count)]);
    out.push([`${prefix}NearLatencyCycles`, infoNumber(partitions.nearLatency.mean)]);
    if (partitions.farLatency) out.push([`${prefix}FarLatencyCycles`, infoNumber(partitions.farLatency.mean)]);
  }
  return out;
}

function migInfo(mig: NonNullable<GpuTopologyDocument['mig']>): HwlocInfo[] {
  const out: HwlocInfo[] = [];
  if (mig.mode) out.push(['TopodMIGMode', mig.mode.current]);
  if (mig.memorySliceCount !== null) out.push(['TopodMIGMemorySlices', String(mig.memorySliceCount)]);
  for (const profile of mig.profiles) {
    const key = `TopodMIGProfile.${profile.name.replace(/^MIG\s+/, '')}`;
    if (profile.l2.bytes !== null)
      out.push([`${key}.L2ShareBytes`, String(profile.l2.bytes)], [`${key}.L2ShareBasis`, l2ShareBasis(profile.l2)]);
    if (profile.l2.reachablePerSmBytes !== null) out.push([`${key}.L2ReachablePerSMBytes`, infoNumber(profile.l2.reachablePerSmBytes)]);
  }
  for (const instance of mig.instances) {
    const key = `TopodMIGInstance.GI${instance.gpuInstanceId}`;
    out.push([`${key}.Profile`, (instance.profileName ?? `profile ${instance.profileId}`).replace(/^MIG\s+/, '')]);
    if (instance.migDeviceUuid) out.push([`${key}.MIGDeviceUUID`, instance.migDeviceUuid]);
    if (instance.multiprocessorCount !== null) out.push([`${key}.SMs`, String(instance.multiprocessorCount)]);
    if (instance.memorySizeBytes !== null) out.push([`${key}.MemoryBytes`, String(instance.memorySizeBytes)]);
    if (instance.l2.bytes !== null)
      out.push([`${key}.L2ShareBytes`, String(instance.l2.bytes)], [`${key}.L2ShareBasis`, l2ShareBasis(instance.l2)]);
    if (instance.l2.reachablePerSmBytes !== null) out.push([`${key}.L2ReachablePerSMBytes`, infoNumber(instance.l2.reachablePerSmBytes)]);
  }
  return out;
}

/** Every info attribute topod adds to one GPU's hwloc object, in a fixed order. */
export function hwlocGpuInfo(gpu: HwlocGpu): HwlocInfo[] {
  const out: HwlocInfo[] = [
    ['TopodGPUUUID', gpu.uuid],
    ['TopodIndex', String(gpu.index)],
    ['TopodProbeStatus', gpu.probeStatus],
    ['TopodDocument', `/v1/gpus/${encodeURIComponent(gpu.uuid)}/topology`],
  ];
  if (gpu.simulated) out.push(['TopodSimulated', '1']);
  const document = gpu.document;
  if (!document) {
    out.push(['TopodMeasurements', `none yet (probe ${gpu.probeStatus}): identity only`]);
    return out;
  }
  if (document.status.stale)
    out.push(['TopodStale', '1'], ['TopodStaleReason', document.status.staleReason ?? 'another driver or probe version']);
  out.push(
    ['TopodProbeFinishedAt', document.probe.finishedAt],
    ['TopodProbeVersion', document.probe.probeVersion],
    ['TopodAnalysisVersion', document.probe.analysisVersion],
    ['TopodDriverVersion', document.probe.driverVersion],
  );
  if (document.warnings.length > 0) out.push(['TopodWarnings', String(document.warnings.length)]);
  if (document.conditions && (document.conditions.busyAtStart || document.conditions.probedWhileBusy))
    out.push(['TopodMeasuredWhileBusy', '1']);
  if (document.device.multiprocessorCount !== undefined) out.push(['TopodSMs', String(document.device.multiprocessorCount)]);
  const gpcs = document.compute?.gpcs;
  if (gpcs) out.push(['TopodGPCs', infoNumber(gpcs.count.value)]);
  for (const [name, element] of elementEntries(document)) out.push(...elementInfo(name, element));
  if (document.mig) out.push(...migInfo(document.mig));
  return out;
}
