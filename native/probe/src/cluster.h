// Compute topology and Hopper thread block clusters (issue 10; thread-block-cluster
// paper): which SM every block of a (clustered) launch runs on, the cluster
// occupancy limits, barrier latencies, distributed shared memory latency and
// transfers, and cluster launch overhead. Kernels in compute-smid.cu and
// cluster.cu; validation and result shapes in cluster-ops.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hip-compat.h"

namespace topod::probe {

// Why this device cannot launch thread block clusters; empty when it can
// (NVIDIA, compute capability 9.0 or newer, built for it).
std::string cluster_unsupported_reason(const hipDeviceProp_t& p);

// The largest cluster this device co-schedules (non-portable sizes allowed);
// 0 without cluster support. Queried once.
int max_cluster_size(const hipDeviceProp_t& p);

// Dynamic shared memory that lets at most one block of a launch on an SM.
size_t one_block_per_sm_shared_bytes(const hipDeviceProp_t& p);

struct SmidSpec {
  uint32_t clusterSize;  // 1: a plain launch
  uint32_t clusters;
  uint32_t repetitions;
};
struct SmidLaunch {
  std::vector<uint32_t> smIds;  // by block
  bool coResident;
};
struct SmidOutcome {
  uint32_t smIdLimit;
  std::vector<SmidLaunch> launches;
};
SmidOutcome run_smid(const SmidSpec& spec, const hipDeviceProp_t& p, uint64_t budgetNs);

struct ClusterLimits {
  int maxPortableClusterSize;
  int maxClusterSize;
  std::vector<int> activeClusters;  // sizes 1..maxClusterSize
};
ClusterLimits query_cluster_limits(const hipDeviceProp_t& p);

struct ClusterSyncSpec {
  uint32_t clusterSize, threadsPerBlock, samples;
};
struct ClusterSyncOutcome {
  std::vector<uint32_t> arrive, wait, clusterSync, syncthreads, gridSync;
};
ClusterSyncOutcome run_cluster_sync(const ClusterSyncSpec& spec);

// The ring every DSMEM latency walk chases: 1024 words, 4 KiB of shared memory.
constexpr uint32_t kDsmemChainElems = 1024;
constexpr uint64_t kDsmemChainBytes = uint64_t{kDsmemChainElems} * 4;
// Shared memory of one DSMEM block beside its transfer buffer: the ring and a sink word.
constexpr uint64_t kDsmemFixedSharedBytes = kDsmemChainBytes + 8;

struct DsmemSpec {
  uint32_t samples, transferBytes, threadsPerBlock, repetitions;
};
struct DsmemOutcome {
  uint32_t smIds[2];
  std::vector<uint32_t> local, remote, l2;
  std::vector<uint64_t> push, pull, global;
};
DsmemOutcome run_dsmem(const DsmemSpec& spec);

struct ClusterLaunchSpec {
  uint32_t clusterSize, blocks, repetitions;
  uint64_t spinNs;
};
struct ClusterLaunchOutcome {
  std::vector<double> clusterSeconds, plainSeconds;
};
ClusterLaunchOutcome run_cluster_launch(const ClusterLaunchSpec& spec, const hipDeviceProp_t& p);

}  // namespace topod::probe
