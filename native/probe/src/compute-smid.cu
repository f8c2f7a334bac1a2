// compute.smid and cluster.limits: where the blocks of a (clustered) launch
// run, and how many clusters of each size the device co-schedules. Blocks of
// one cluster always share a GPC, so SMs that share a cluster in any launch
// share a GPC (thread-block-cluster paper, §III-A1).
#include <algorithm>

#include "cluster-launch.h"
#include "cluster.h"
#include "device-ops.h"
#include "runtime.h"

namespace topod::probe {

namespace {

// How long a block waits for the rest of its launch before it gives up (the launch is then not co-resident).
constexpr uint64_t kArrivalWaitNs = 20'000'000;

// Thread 0 of every block records its SM, arrives, and waits (bounded) until
// every block of the launch has arrived, so a launch that fits the GPU holds
// all its blocks at once. The dynamic shared memory (never touched) keeps a
// second block off the SM.
__global__ void smid_kernel(uint32_t* smIds, unsigned int* arrived, unsigned int* missed, uint32_t total, uint64_t waitNs,
                            uint32_t* smIdLimit) {
  if (threadIdx.x != 0) return;
  smIds[blockIdx.x] = ops::sm_id();
  if (blockIdx.x == 0) *smIdLimit = ops::sm_id_limit();
  atomicAdd(arrived, 1u);
  const uint64_t t0 = ops::globaltimer_ns();
  while (*reinterpret_cast<volatile unsigned int*>(arrived) < total) {
    if (ops::globaltimer_ns() - t0 > waitNs) {
      atomicAdd(missed, 1u);
      break;
    }
  }
}

}  // namespace

std::string cluster_unsupported_reason(const hipDeviceProp_t& p) {
#if defined(TOPOD_VENDOR_NVIDIA)
  if (p.major < 9) {
    return "thread block clusters need compute capability 9.0 or newer; this device is sm_" + std::to_string(p.major) +
           std::to_string(p.minor);
  }
  return "";
#else
  (void)p;
  return "thread block clusters are an NVIDIA Hopper feature; this is an AMD GPU";
#endif
}

size_t one_block_per_sm_shared_bytes(const hipDeviceProp_t& p) {
  const size_t optin = compat::shared_mem_per_block_optin(p);
  return optin > 0 ? optin : p.sharedMemPerBlock;
}

SmidOutcome run_smid(const SmidSpec& spec, const hipDeviceProp_t& p, uint64_t budgetNs) {
  const uint32_t total = spec.clusters * spec.clusterSize;
  const size_t shared = one_block_per_sm_shared_bytes(p);
  check(
      hipFuncSetAttribute(reinterpret_cast<const void*>(smid_kernel), hipFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)),
      "hipFuncSetAttribute(smid_kernel)");
  DeviceBuffer<uint32_t> smIds(total), limit(1);
  DeviceBuffer<unsigned int> counters(2);  // arrived, missed
  const uint64_t waitNs = std::min(kArrivalWaitNs, budgetNs);
  SmidOutcome out{0, {}};
  for (uint32_t rep = 0; rep < spec.repetitions; ++rep) {
    counters.zero();
    if (spec.clusterSize == 1) {
      smid_kernel<<<total, 32, shared>>>(smIds.get(), counters.get(), counters.get() + 1, total, waitNs, limit.get());
    } else {
#if defined(TOPOD_VENDOR_NVIDIA)
      allow_large_clusters(reinterpret_cast<const void*>(smid_kernel));
      check(launch_in_clusters(smid_kernel, total, 32, shared, spec.clusterSize, smIds.get(), counters.get(), counters.get() + 1, total,
                               waitNs, limit.get()),
            "cudaLaunchKernelEx(smid_kernel)");
#endif
    }
    check_launch("smid_kernel");
    SmidLaunch launch{std::vector<uint32_t>(total), false};
    smIds.download(launch.smIds.data(), total);
    unsigned int host[2] = {0, 0};
    counters.download(host, 2);
    launch.coResident = host[1] == 0;
    limit.download(&out.smIdLimit, 1);
    out.launches.push_back(std::move(launch));
  }
  return out;
}

#if defined(TOPOD_VENDOR_NVIDIA)
namespace {

int potential_cluster_size(const cudaLaunchConfig_t& config, int nonPortable) {
  check(cudaFuncSetAttribute(reinterpret_cast<const void*>(smid_kernel), cudaFuncAttributeNonPortableClusterSizeAllowed, nonPortable),
        "cudaFuncSetAttribute(NonPortableClusterSizeAllowed)");
  int size = 0;
  check(cudaOccupancyMaxPotentialClusterSize(&size, smid_kernel, &config), "cudaOccupancyMaxPotentialClusterSize");
  return size;
}

}  // namespace
#endif

ClusterLimits query_cluster_limits(const hipDeviceProp_t& p) {
  ClusterLimits out{0, 0, {}};
#if defined(TOPOD_VENDOR_NVIDIA)
  const size_t shared = one_block_per_sm_shared_bytes(p);
  check(cudaFuncSetAttribute(reinterpret_cast<const void*>(smid_kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(shared)),
        "cudaFuncSetAttribute(smid_kernel)");
  cudaLaunchAttribute attr;
  cudaLaunchConfig_t config = cluster_config(attr, 1, 32, shared, 1);
  out.maxPortableClusterSize = potential_cluster_size(config, 0);
  out.maxClusterSize = potential_cluster_size(config, 1);
  for (int size = 1; size <= out.maxClusterSize; ++size) {
    config = cluster_config(attr, static_cast<uint32_t>(size), 32, shared, static_cast<uint32_t>(size));
    int clusters = 0;
    check(cudaOccupancyMaxActiveClusters(&clusters, smid_kernel, &config), "cudaOccupancyMaxActiveClusters");
    out.activeClusters.push_back(clusters);
  }
#else
  (void)p;
#endif
  return out;
}

int max_cluster_size(const hipDeviceProp_t& p) {
  static int cached = -1;
  if (cached < 0) cached = cluster_unsupported_reason(p).empty() ? query_cluster_limits(p).maxClusterSize : 0;
  return cached;
}

}  // namespace topod::probe
