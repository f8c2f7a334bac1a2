// Launching a kernel in thread block clusters (cudaLaunchKernelEx with
// cudaLaunchAttributeClusterDimension), NVIDIA only: HIP has no clusters.
#pragma once

#include <utility>

#include "hip-compat.h"
#include "runtime.h"

namespace topod::probe {

#if defined(TOPOD_VENDOR_NVIDIA)
// Clusters over 8 blocks are "non-portable": each kernel launched with them must opt in.
inline void allow_large_clusters(const void* kernel) {
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1),
        "cudaFuncSetAttribute(NonPortableClusterSizeAllowed)");
}

// A launch config of `blocks` x `threads` in clusters of `clusterSize` blocks (1-D); `attr` must outlive it.
inline cudaLaunchConfig_t cluster_config(cudaLaunchAttribute& attr, uint32_t blocks, uint32_t threads, size_t sharedBytes,
                                         uint32_t clusterSize) {
  attr = cudaLaunchAttribute{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = clusterSize;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = sharedBytes;
  config.stream = nullptr;
  config.attrs = &attr;
  config.numAttrs = 1;
  return config;
}

template <typename... Params, typename... Args>
cudaError_t launch_in_clusters(void (*kernel)(Params...), uint32_t blocks, uint32_t threads, size_t sharedBytes, uint32_t clusterSize,
                               Args&&... args) {
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t config = cluster_config(attr, blocks, threads, sharedBytes, clusterSize);
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}
#endif

}  // namespace topod::probe
