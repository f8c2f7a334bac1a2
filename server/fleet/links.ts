/**
 * How the node's GPUs connect, in `nvidia-smi topo -m` terms, from one NVML
 * snapshot. Pure.
 *
 * NVLink: links whose remote end is the other GPU's PCI bus id are direct
 * (NV<n>, n links). On HGX boards every link ends at an NVSwitch instead, and
 * the two GPUs talk through the fabric: NVML's peer-to-peer NVLink status says
 * whether they can, and nvidia-smi counts min(links of either) — so does this.
 * Without NVLink the closest common PCIe ancestor names the path: PIX (one
 * switch), PXB (several), PHB (a host bridge), NODE (one NUMA node), SYS
 * (across the SMP interconnect).
 */
import type { DynamicSnapshot, NvlinkRemoteType, NvmlDevicePair, NvmlDeviceState } from '../dynamic/types.js';
import type { P2pStatus, PcieAncestor } from '../model/node-schema.js';

export const TOPO_PCIE_NAMES: Record<PcieAncestor, string> = {
  internal: 'PIX',
  single: 'PIX',
  multiple: 'PXB',
  hostbridge: 'PHB',
  node: 'NODE',
  system: 'SYS',
};

export interface GpuLink {
  gpus: [string, string];
  indices: [number, number];
  /** What `nvidia-smi topo -m` prints for the pair: NV<n>, PIX, PXB, PHB, NODE, SYS; null when NVML said nothing. */
  topo: string | null;
  nvlink: { count: number; via: 'direct' | 'switch' } | null;
  pcie: { commonAncestor: PcieAncestor | null };
  p2p: { read: P2pStatus | null; write: P2pStatus | null; nvlink: P2pStatus | null; atomics: P2pStatus | null };
  degraded: string[];
}

const busKey = (busId: string | null | undefined): string | null => (busId ? busId.trim().toUpperCase() : null);

function remoteType(device: NvmlDeviceState, link: number): NvlinkRemoteType | null {
  return device.nvlinkRemoteTypes?.find((l) => l.link === link)?.type ?? null;
}

/** Links of `device` ending at an NVSwitch (or, where NVML gave no type, at no GPU of this node). */
function switchLinks(device: NvmlDeviceState, gpuBuses: Set<string>): number {
  return device.nvlinks.filter((l) => {
    const type = remoteType(device, l.link);
    if (type !== null) return type === 'switch';
    const bus = busKey(l.remotePciBusId);
    return bus !== null && !gpuBuses.has(bus);
  }).length;
}

function linkOf(a: NvmlDeviceState, b: NvmlDeviceState, pair: NvmlDevicePair | null, gpuBuses: Set<string>): GpuLink {
  const busB = busKey(b.pciBusId);
  const busA = busKey(a.pciBusId);
  const direct = Math.max(
    busB === null ? 0 : a.nvlinks.filter((l) => busKey(l.remotePciBusId) === busB).length,
    busA === null ? 0 : b.nvlinks.filter((l) => busKey(l.remotePciBusId) === busA).length,
  );
  const p2p = pair?.p2p ?? { read: null, write: null, nvlink: null, atomics: null };
  let nvlink: GpuLink['nvlink'] = null;
  if (direct > 0) nvlink = { count: direct, via: 'direct' };
  else {
    const viaSwitch = Math.min(switchLinks(a, gpuBuses), switchLinks(b, gpuBuses));
    // The fabric can be up on both sides yet not joined (another NVLink partition): trust NVML's P2P answer when it gave one.
    if (viaSwitch > 0 && (p2p.nvlink === 'ok' || p2p.nvlink === null)) nvlink = { count: viaSwitch, via: 'switch' };
  }
  const ancestor = pair?.commonAncestor ?? null;
  return {
    gpus: [a.uuid, b.uuid],
    indices: [a.index, b.index],
    topo: nvlink ? `NV${nvlink.count}` : ancestor ? TOPO_PCIE_NAMES[ancestor] : null,
    nvlink,
    pcie: { commonAncestor: ancestor },
    p2p,
    degraded: pair?.degraded ?? ['pair: NOT_READ'],
  };
}

/** Every pair of the snapshot's GPUs, lower index first. */
export function gpuLinks(snapshot: DynamicSnapshot | null): GpuLink[] {
  if (!snapshot?.available) return [];
  const devices = [...snapshot.devices].sort((x, y) => x.index - y.index);
  const gpuBuses = new Set(devices.flatMap((d) => busKey(d.pciBusId) ?? []));
  const links: GpuLink[] = [];
  for (let i = 0; i < devices.length; i++) {
    for (let j = i + 1; j < devices.length; j++) {
      const a = devices[i] as NvmlDeviceState;
      const b = devices[j] as NvmlDeviceState;
      const pair =
        snapshot.links?.find((p) => (p.gpus[0] === a.uuid && p.gpus[1] === b.uuid) || (p.gpus[0] === b.uuid && p.gpus[1] === a.uuid)) ??
        null;
      links.push(linkOf(a, b, pair, gpuBuses));
    }
  }
  return links;
}
