/**
 * Fit advice: for a working set, which MIG GPU-instance profiles keep it
 * inside their L2 share, inside what one SM can reach (min(share, measured
 * L2 segment)), and the latency class a load should expect (an L2 hit or
 * device memory) — from the measured topology and NVML's profile table, with
 * every number it used; for a described access, what it costs in device-memory
 * traffic (./fit-traffic.ts). Pure: the route and the CLI only present it.
 */
import type { GpuTopologyDocument, LatencyValue } from '../model/document.js';
import type { FitAdvice, FitProfile, LatencyClass } from '../model/fit-schema.js';
import { fitTraffic, type FitAccess } from './fit-traffic.js';

function latencyUsed(element: string, latency: LatencyValue | undefined): FitProfile['expectedLatency'] {
  return latency ? { element, meanCycles: latency.mean, meanNs: latency.meanNs ?? null } : null;
}

function latencyClass(fitsShare: boolean | null, fitsReachable: boolean | null): LatencyClass {
  if (fitsShare === null) return 'unknown';
  if (!fitsShare) return 'device-memory';
  return fitsReachable === false ? 'l2-far' : 'l2-hit';
}

/** The advice for `workingSetBytes`; with `access`, also what that access costs in device-memory traffic. */
export function fitAdvice(document: GpuTopologyDocument, workingSetBytes: number, access?: FitAccess): FitAdvice {
  const l2 = document.elements.l2;
  const mig = document.mig;
  const l2SizeBytes = mig?.l2SizeBytes ?? l2?.size?.value ?? document.device.l2CacheSizeBytes ?? null;
  const l2SegmentBytes = mig?.l2SegmentBytes ?? l2?.segmentSize?.value ?? null;
  const l2Latency = latencyUsed('l2', l2?.latency);
  const memoryLatency = latencyUsed('deviceMemory', document.elements.deviceMemory?.latency);
  const expected = (cls: LatencyClass) => (cls === 'device-memory' ? memoryLatency : cls === 'unknown' ? null : l2Latency);

  const rows = (mig?.profiles ?? []).map((profile) => ({
    profileId: profile.id,
    name: profile.name,
    multiprocessorCount: profile.multiprocessorCount,
    memorySizeBytes: profile.memorySizeBytes,
    l2ShareBytes: profile.l2.bytes,
    reachablePerSmBytes: profile.l2.reachablePerSmBytes,
  }));
  if (rows.length === 0) {
    rows.push({
      profileId: 0,
      name: 'whole GPU',
      multiprocessorCount: document.device.multiprocessorCount ?? 0,
      memorySizeBytes: document.elements.deviceMemory?.size?.value ?? document.device.totalMemoryBytes ?? 0,
      l2ShareBytes: l2SizeBytes,
      reachablePerSmBytes: l2SizeBytes === null || l2SegmentBytes === null ? null : Math.min(l2SizeBytes, l2SegmentBytes),
    });
  }
  const profiles: FitProfile[] = rows
    .sort((a, b) => (a.l2ShareBytes ?? 0) - (b.l2ShareBytes ?? 0) || a.multiprocessorCount - b.multiprocessorCount)
    .map((row) => {
      const fitsInL2Share = row.l2ShareBytes === null ? null : workingSetBytes <= row.l2ShareBytes;
      const fitsInReachableL2 = row.reachablePerSmBytes === null ? null : workingSetBytes <= row.reachablePerSmBytes;
      const cls = latencyClass(fitsInL2Share, fitsInReachableL2);
      return {
        ...row,
        fitsInL2Share,
        fitsInReachableL2,
        fitsInMemory: workingSetBytes <= row.memorySizeBytes,
        latencyClass: cls,
        expectedLatency: expected(cls),
      };
    });
  const best = profiles.find((p) => p.fitsInReachableL2 === true) ?? profiles.find((p) => p.fitsInL2Share === true) ?? null;
  const summary =
    best === null
      ? profiles.every((p) => p.fitsInL2Share === null)
        ? 'The L2 size of this GPU is not known, so no fit can be judged.'
        : 'No profile holds this working set in L2: expect device-memory latency.'
      : `${best.name} is the smallest profile that keeps it in L2 (${best.latencyClass === 'l2-hit' ? 'within one SM’s reach' : 'in its share, across L2 segments'}).`;
  return {
    gpuUuid: document.gpu.uuid,
    gpuName: document.gpu.name,
    workingSetBytes,
    simulated: document.simulated,
    basis: {
      l2SizeBytes,
      l2SizeSource: l2?.size?.source ?? (document.device.l2CacheSizeBytes !== undefined ? 'api' : null),
      l2SegmentBytes,
      memorySliceCount: mig?.memorySliceCount ?? null,
      l2Latency,
      deviceMemoryLatency: memoryLatency,
      migMode: mig?.mode?.current ?? null,
    },
    profiles,
    smallestFittingProfile: best?.name ?? null,
    summary,
    ...(access ? { traffic: fitTraffic(document, workingSetBytes, access) } : {}),
  };
}
