import type {
  ClusterDsmemResult,
  ClusterLaunchResult,
  ClusterLimitsResult,
  ClusterSyncResult,
  ComputeSmidResult,
  DeviceProperties,
} from '../../protocol/ops.js';
import type { ClusterModel, GpuModel } from './model.js';
import type { SimulatedDevice } from './simulated-device.js';
import {
  validateClusterDsmem,
  validateClusterLaunch,
  validateClusterLimits,
  validateClusterSync,
  validateComputeSmid,
  type ClusterLimits,
} from '../../protocol/validate.js';

/** Scheduling cost of one wave of blocks in a launch (cluster.launch), on top of the blocks' own spin. */
const WAVE_OVERHEAD_S = 1e-6;
/** A warp moves DSMEM and global transfers at its rate; up to this many warps add up. */
const TRANSFER_WARPS = 4;

/**
 * The compute ops of the simulated GPU (issue 10): SM placement of plain and
 * clustered launches on the model's SM → GPC map, cluster occupancy,
 * barrier latencies, DSMEM and cluster launch cost. Like the native probe,
 * every block of a placement launch has an SM to itself.
 */
export class SimulatedCompute {
  constructor(
    private readonly device: SimulatedDevice,
    private readonly properties: DeviceProperties,
  ) {}

  private get model(): GpuModel {
    return this.device.model;
  }

  /** What the cluster rules of validate.ts check against. */
  limits(): ClusterLimits {
    return { ...this.properties, maxClusterSize: this.model.compute.clusters?.maxClusterSize ?? 0 };
  }

  private clusters(): ClusterModel {
    // validate.ts refused every cluster op on a model without clusters.
    return this.model.compute.clusters!;
  }

  /** SM ids of each GPC, ascending. */
  private gpcs(): number[][] {
    const gpcs: number[][] = [];
    for (const [smId, gpc] of this.model.compute.gpcOfSm.entries()) {
      const sms = gpcs[gpc] ?? [];
      sms.push(smId);
      gpcs[gpc] = sms;
    }
    return gpcs;
  }

  /** Clusters of `size` that fit at once, one block per SM: each GPC holds floor(its SMs / size). */
  activeClusters(size: number): number {
    if (size === 1) return this.properties.multiprocessorCount;
    if (size > (this.model.compute.clusters?.maxClusterSize ?? 0)) return 0;
    return this.gpcs().reduce((sum, sms) => sum + Math.floor(sms.length / size), 0);
  }

  smid(raw: unknown): ComputeSmidResult {
    const args = validateComputeSmid(raw, this.limits());
    const launches = Array.from({ length: args.repetitions }, () => this.place(args.clusterSize, args.clusters));
    this.device.addSeconds(args.repetitions * (this.model.launchOverheadS + WAVE_OVERHEAD_S));
    return { smIdLimit: this.properties.multiprocessorCount, launches };
  }

  /**
   * One launch: each cluster goes to the GPC with the most free SMs (ties
   * broken from a random GPC on), onto free SMs of it taken from a random
   * TPC of its list; a cluster that finds no GPC with room waits for the
   * first wave to end (the launch is then not co-resident). Plain launches
   * (size 1) take the SMs in a rotated order.
   */
  private place(size: number, clusters: number): { smIds: number[]; coResident: boolean } {
    const gpcs = this.gpcs();
    let free = gpcs.map((sms) => [...sms]);
    const smIds: number[] = [];
    let coResident = true;
    const start = this.device.randomBelow(gpcs.length);
    for (let cluster = 0; cluster < clusters; cluster += 1) {
      const order = free.map((_, i) => (start + i) % free.length);
      let gpc = order.reduce((best, g) => (free[g]!.length > free[best]!.length ? g : best), order[0]!);
      if (free[gpc]!.length < size) {
        coResident = false;
        free = gpcs.map((sms) => [...sms]);
        gpc = order.reduce((best, g) => (free[g]!.length > free[best]!.length ? g : best), order[0]!);
      }
      const sms = free[gpc]!;
      // From a TPC boundary (the list is made of SM pairs): a cluster of two lands on one TPC, as on the H100.
      const from = 2 * this.device.randomBelow(Math.ceil(sms.length / 2));
      const taken = Array.from({ length: size }, (_, k) => sms[(from + k) % sms.length]!);
      free[gpc] = sms.filter((sm) => !taken.includes(sm));
      smIds.push(...taken);
    }
    return { smIds, coResident };
  }

  limitsResult(raw: unknown): ClusterLimitsResult {
    validateClusterLimits(raw, this.limits());
    const clusters = this.clusters();
    this.device.addSeconds(this.model.launchOverheadS);
    return {
      maxPortableClusterSize: clusters.maxPortableClusterSize,
      maxClusterSize: clusters.maxClusterSize,
      activeClusters: Array.from({ length: clusters.maxClusterSize }, (_, i) => this.activeClusters(i + 1)),
    };
  }

  sync(raw: unknown): ClusterSyncResult {
    const args = validateClusterSync(raw, this.limits());
    const b = this.clusters().barrier;
    const size = args.clusterSize;
    const arrive = b.arriveCycles + b.arriveCyclesPerBlockOver8 * Math.max(0, size - 8);
    const wait = b.waitCycles + b.waitCyclesPerBlock * (size - 1);
    const syncthreads = b.syncthreadsCycles + b.syncthreadsCyclesPerWarp * (Math.ceil(args.threadsPerBlock / this.properties.warpSize) - 1);
    const grid = b.gridSyncCycles + b.gridSyncCyclesPerBlock * (size - 1);
    const series = (cycles: number) => Array.from({ length: args.samples }, () => this.device.observe(cycles));
    this.device.addSeconds(
      2 * this.model.launchOverheadS + (args.samples * (2 * (arrive + wait) + syncthreads + 2 * grid)) / this.model.clock.smClockHz,
    );
    return {
      arriveCycles: series(arrive),
      waitCycles: series(wait),
      clusterSyncCycles: series(arrive + wait),
      syncthreadsCycles: series(syncthreads),
      gridSyncCycles: series(grid),
    };
  }

  /** Two blocks on two SMs of the first GPC; transfers at the model's per-warp rates between three pair barriers. */
  dsmem(raw: unknown): ClusterDsmemResult {
    const args = validateClusterDsmem(raw, this.limits());
    const clusters = this.clusters();
    const pair = this.gpcs()[0]!.slice(0, 2);
    const latencies = (cycles: number) => Array.from({ length: args.samples }, () => this.device.observe(cycles));
    const warps = Math.min(TRANSFER_WARPS, args.threadsPerBlock / this.properties.warpSize);
    const barriers = 3 * (clusters.barrier.arriveCycles + clusters.barrier.waitCycles + clusters.barrier.waitCyclesPerBlock);
    const transfer = (bytesPerCyclePerWarp: number) =>
      Array.from({ length: args.repetitions }, () =>
        Math.round(this.device.jitter(barriers + args.transferBytes / (bytesPerCyclePerWarp * warps), 0.01)),
      );
    const result: ClusterDsmemResult = {
      smIds: pair,
      localLatenciesCycles: latencies(this.model.shared.latencyCycles),
      remoteLatenciesCycles: latencies(clusters.dsmem.remoteLatencyCycles),
      l2LatenciesCycles: latencies(this.model.l2.nearHitLatencyCycles),
      pushCycles: transfer(clusters.dsmem.pushBytesPerCyclePerWarp),
      pullCycles: transfer(clusters.dsmem.pullBytesPerCyclePerWarp),
      globalCycles: transfer(clusters.dsmem.globalBytesPerCyclePerWarp),
    };
    const cycles = [...result.pushCycles, ...result.pullCycles, ...result.globalCycles].reduce((sum, c) => sum + c, 0);
    this.device.addSeconds(this.model.launchOverheadS + cycles / this.model.clock.smClockHz);
    return result;
  }

  /** The grid in waves: as many blocks at once as SMs (plain) or as whole clusters fit (clustered). */
  launch(raw: unknown): ClusterLaunchResult {
    const args = validateClusterLaunch(raw, this.limits());
    const waveSeconds = args.spinNs * 1e-9 + WAVE_OVERHEAD_S;
    const seconds = (waves: number) =>
      Array.from({ length: args.repetitions }, () => this.device.jitter(this.model.launchOverheadS + waves * waveSeconds, 0.005));
    const clusterWaves = Math.ceil(args.blocks / args.clusterSize / this.activeClusters(args.clusterSize));
    const plainWaves = Math.ceil(args.blocks / this.properties.multiprocessorCount);
    const result = { clusterSecondsPerRepetition: seconds(clusterWaves), plainSecondsPerRepetition: seconds(plainWaves) };
    this.device.addSeconds([...result.clusterSecondsPerRepetition, ...result.plainSecondsPerRepetition].reduce((sum, s) => sum + s, 0));
    return result;
  }
}
