// cluster.sync, cluster.dsmem, cluster.launch: what thread block clusters
// cost (thread-block-cluster paper §III-A). NVIDIA sm_90+ only: the kernels
// are empty on older targets and the host answers `unsupported` before it
// launches them (cluster-ops.cpp); AMD builds none of this.
#include "cluster.h"

#include "runtime.h"

#if defined(TOPOD_VENDOR_NVIDIA)
#include <cooperative_groups.h>

#include "cluster-launch.h"
#include "device-ops.h"
#endif

namespace topod::probe {

#if defined(TOPOD_VENDOR_NVIDIA)
namespace {

// Every thread of the cluster takes part in each barrier; block 0's thread 0
// times them (paper Listing 2): arrive alone, the wait after it, both
// together (cluster.sync()), then __syncthreads().
__global__ void cluster_sync_kernel(uint32_t* out, uint32_t samples) {
#if defined(TOPOD_DEVICE_HAS_CLUSTERS)
  const bool timer = blockIdx.x == 0 && threadIdx.x == 0;
#pragma unroll 1
  for (uint32_t k = 0; k < samples; ++k) {
    const uint32_t t0 = ops::clock32();
    ops::cluster_arrive();
    const uint32_t t1 = ops::clock32();
    ops::cluster_wait();
    const uint32_t t2 = ops::clock32();
    ops::cluster_sync();
    const uint32_t t3 = ops::clock32();
    __syncthreads();
    const uint32_t t4 = ops::clock32();
    if (timer) {
      out[k] = t1 - t0;
      out[samples + k] = t2 - t1;
      out[2 * samples + k] = t3 - t2;
      out[3 * samples + k] = t4 - t3;
    }
    ops::cluster_sync();  // the stores above stay out of the next sample's barriers
  }
#else
  (void)out;
  (void)samples;
#endif
}

// grid.sync() in a cooperative launch of the same shape, timed the same way.
__global__ void grid_sync_kernel(uint32_t* out, uint32_t samples) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const bool timer = blockIdx.x == 0 && threadIdx.x == 0;
#pragma unroll 1
  for (uint32_t k = 0; k < samples; ++k) {
    const uint32_t t0 = ops::clock32();
    grid.sync();
    const uint32_t t1 = ops::clock32();
    if (timer) out[k] = t1 - t0;
    grid.sync();
  }
}

struct DsmemBuffers {
  uint32_t* globalChain;  // kDsmemChainElems words, one per 128-byte line
  uint64_t* globalTransfer;
  uint32_t* latencies;        // local, remote, l2: samples each
  unsigned long long* spans;  // push, pull, global: repetitions each
  uint64_t* sink;             // one word per thread of the cluster
  uint32_t* smIds;
};

[[maybe_unused]] constexpr uint32_t kChainStep = 33;  // odd: the ring visits all 1024 words
constexpr uint32_t kLineWords = 32;

// Block 0 (rank 0) reads, block 1 (rank 1) owns the remote shared memory and produces the transfers.
__global__ void dsmem_kernel(DsmemBuffers b, uint32_t samples, uint32_t words, uint32_t repetitions) {
#if defined(TOPOD_DEVICE_HAS_CLUSTERS)
  extern __shared__ uint64_t shm64[];
  uint32_t* chain = reinterpret_cast<uint32_t*>(shm64);
  uint32_t* sinkWord = chain + kDsmemChainElems;
  uint64_t* buffer = shm64 + (kDsmemFixedSharedBytes / 8);
  const uint32_t rank = ops::cluster_rank();
  const uint32_t tid = threadIdx.x, threads = blockDim.x;
  for (uint32_t i = tid; i < kDsmemChainElems; i += threads) chain[i] = (i + kChainStep) % kDsmemChainElems;
  if (rank == 0)
    for (uint32_t i = tid; i < kDsmemChainElems; i += threads)
      b.globalChain[i * kLineWords] = ((i + kChainStep) % kDsmemChainElems) * kLineWords;
  if (tid == 0) b.smIds[rank] = ops::sm_id();
  ops::cluster_sync();

  if (rank == 0 && tid == 0) {
    uint32_t j = 0;
#pragma unroll 1
    for (uint32_t k = 0; k < samples; ++k) {
      const uint32_t t0 = ops::clock32();
      j = ops::load_shared(chain + j);
      ops::consume(sinkWord, j);
      b.latencies[k] = ops::clock32() - t0;
    }
    const uint32_t remote = ops::map_shared_rank(ops::shared_address(chain), 1);
    j = 0;
#pragma unroll 1
    for (uint32_t k = 0; k < samples; ++k) {
      const uint32_t t0 = ops::clock32();
      j = ops::load_shared_cluster(remote + 4 * j);
      ops::consume(sinkWord, j);
      b.latencies[samples + k] = ops::clock32() - t0;
    }
    j = 0;
#pragma unroll 1
    for (uint32_t k = 0; k < kDsmemChainElems; ++k) j = ops::load_global_cg(b.globalChain + j);  // untimed lap: the ring in the L2
    ops::consume(sinkWord, j);
#pragma unroll 1
    for (uint32_t k = 0; k < samples; ++k) {
      const uint32_t t0 = ops::clock32();
      j = ops::load_global_cg(b.globalChain + j);
      ops::consume(sinkWord, j);
      b.latencies[2 * samples + k] = ops::clock32() - t0;
    }
  }
  ops::cluster_sync();  // block 1's shared memory stays alive while block 0 reads it

  uint64_t acc = 0;
  const bool timer = rank == 0 && tid == 0;
  const uint32_t remoteBufferOf0 = ops::map_shared_rank(ops::shared_address(buffer), 0);
  const uint32_t remoteBufferOf1 = ops::map_shared_rank(ops::shared_address(buffer), 1);
#pragma unroll 1
  for (uint32_t r = 0; r < repetitions; ++r) {
    // Push: block 1 stores into block 0's shared memory; block 0 reads its own.
    ops::cluster_sync();
    uint64_t t0 = ops::clock64();
    if (rank == 1)
      for (uint32_t i = tid; i < words; i += threads) ops::store_shared_cluster_u64(remoteBufferOf0 + 8 * i, i ^ r);
    ops::cluster_sync();
    if (rank == 0)
      for (uint32_t i = tid; i < words; i += threads) acc ^= reinterpret_cast<volatile uint64_t*>(buffer)[i];
    ops::cluster_sync();
    if (timer) b.spans[r] = ops::clock64() - t0;

    // Pull: block 1 writes its own shared memory; block 0 loads it from there.
    ops::cluster_sync();
    t0 = ops::clock64();
    if (rank == 1)
      for (uint32_t i = tid; i < words; i += threads) reinterpret_cast<volatile uint64_t*>(buffer)[i] = i + r;
    ops::cluster_sync();
    if (rank == 0)
      for (uint32_t i = tid; i < words; i += threads) acc ^= ops::load_shared_cluster_u64(remoteBufferOf1 + 8 * i);
    ops::cluster_sync();
    if (timer) b.spans[repetitions + r] = ops::clock64() - t0;

    // Global: block 1 stores to global memory; block 0 loads it through the L2.
    ops::cluster_sync();
    t0 = ops::clock64();
    if (rank == 1)
      for (uint32_t i = tid; i < words; i += threads) reinterpret_cast<volatile uint64_t*>(b.globalTransfer)[i] = i * r;
    ops::cluster_sync();
    if (rank == 0)
      for (uint32_t i = tid; i < words; i += threads) acc ^= ops::load_global_cg_u64(b.globalTransfer + i);
    ops::cluster_sync();
    if (timer) b.spans[2 * repetitions + r] = ops::clock64() - t0;
  }
  b.sink[rank * threads + tid] = acc;
  ops::cluster_sync();
#else
  (void)b;
  (void)samples;
  (void)words;
  (void)repetitions;
#endif
}

// One block a while on its SM (the paper's sleeping blocks, on the global timer).
__global__ void spin_kernel(uint64_t spinNs) {
  if (threadIdx.x != 0) return;
  const uint64_t t0 = ops::globaltimer_ns();
  while (ops::globaltimer_ns() - t0 < spinNs) {
  }
}

template <typename T>
std::vector<T> slice(const std::vector<T>& all, size_t from, size_t count) {
  return std::vector<T>(all.begin() + static_cast<std::ptrdiff_t>(from), all.begin() + static_cast<std::ptrdiff_t>(from + count));
}

}  // namespace

ClusterSyncOutcome run_cluster_sync(const ClusterSyncSpec& s) {
  DeviceBuffer<uint32_t> out(4 * uint64_t{s.samples}), grid(s.samples);
  allow_large_clusters(reinterpret_cast<const void*>(cluster_sync_kernel));
  check(launch_in_clusters(cluster_sync_kernel, s.clusterSize, s.threadsPerBlock, 0, s.clusterSize, out.get(), s.samples),
        "cudaLaunchKernelEx(cluster_sync_kernel)");
  check_launch("cluster_sync_kernel");
  uint32_t* gridOut = grid.get();
  uint32_t samples = s.samples;
  void* args[] = {&gridOut, &samples};
  check(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(grid_sync_kernel), dim3(s.clusterSize), dim3(s.threadsPerBlock), args, 0,
                                    nullptr),
        "cudaLaunchCooperativeKernel(grid_sync_kernel)");
  check_launch("grid_sync_kernel");
  std::vector<uint32_t> host(4 * uint64_t{s.samples}), gridHost(s.samples);
  out.download(host.data(), host.size());
  grid.download(gridHost.data(), gridHost.size());
  return {slice(host, 0, s.samples), slice(host, s.samples, s.samples), slice(host, 2 * s.samples, s.samples),
          slice(host, 3 * s.samples, s.samples), gridHost};
}

DsmemOutcome run_dsmem(const DsmemSpec& s) {
  const uint32_t words = s.transferBytes / 8;
  const size_t shared = kDsmemFixedSharedBytes + s.transferBytes;
  DeviceBuffer<uint32_t> globalChain(uint64_t{kDsmemChainElems} * kLineWords), latencies(3 * uint64_t{s.samples}), smIds(2);
  DeviceBuffer<uint64_t> globalTransfer(words), sink(2 * uint64_t{s.threadsPerBlock});
  DeviceBuffer<unsigned long long> spans(3 * uint64_t{s.repetitions});
  check(cudaFuncSetAttribute(reinterpret_cast<const void*>(dsmem_kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(shared)),
        "cudaFuncSetAttribute(dsmem_kernel)");
  const DsmemBuffers b{globalChain.get(), globalTransfer.get(), latencies.get(), spans.get(), sink.get(), smIds.get()};
  check(launch_in_clusters(dsmem_kernel, 2, s.threadsPerBlock, shared, 2, b, s.samples, words, s.repetitions),
        "cudaLaunchKernelEx(dsmem_kernel)");
  check_launch("dsmem_kernel");
  std::vector<uint32_t> lat(3 * uint64_t{s.samples});
  latencies.download(lat.data(), lat.size());
  std::vector<unsigned long long> sp(3 * uint64_t{s.repetitions});
  spans.download(sp.data(), sp.size());
  DsmemOutcome out{};
  smIds.download(out.smIds, 2);
  out.local = slice(lat, 0, s.samples);
  out.remote = slice(lat, s.samples, s.samples);
  out.l2 = slice(lat, 2 * uint64_t{s.samples}, s.samples);
  const std::vector<uint64_t> spans64(sp.begin(), sp.end());
  out.push = slice(spans64, 0, s.repetitions);
  out.pull = slice(spans64, s.repetitions, s.repetitions);
  out.global = slice(spans64, 2 * uint64_t{s.repetitions}, s.repetitions);
  return out;
}

ClusterLaunchOutcome run_cluster_launch(const ClusterLaunchSpec& s, const hipDeviceProp_t& p) {
  const size_t shared = one_block_per_sm_shared_bytes(p);
  check(cudaFuncSetAttribute(reinterpret_cast<const void*>(spin_kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(shared)),
        "cudaFuncSetAttribute(spin_kernel)");
  allow_large_clusters(reinterpret_cast<const void*>(spin_kernel));
  auto clustered = [&] {
    check(launch_in_clusters(spin_kernel, s.blocks, 32, shared, s.clusterSize, s.spinNs), "cudaLaunchKernelEx(spin_kernel)");
  };
  auto plain = [&] { spin_kernel<<<s.blocks, 32, shared>>>(s.spinNs); };
  EventTimer timer;
  auto timed = [&](auto launch) { return timer.seconds("spin_kernel", launch); };
  clustered();
  plain();
  check_launch("spin_kernel warm-up");
  ClusterLaunchOutcome out;
  for (uint32_t rep = 0; rep < s.repetitions; ++rep) {
    out.clusterSeconds.push_back(timed(clustered));
    out.plainSeconds.push_back(timed(plain));
  }
  return out;
}

#else  // AMD: no thread block clusters (cluster-ops.cpp answers unsupported before reaching these).

ClusterSyncOutcome run_cluster_sync(const ClusterSyncSpec&) {
  throw ProbeFailure(ErrorCode::Unsupported, "no thread block clusters on AMD");
}
DsmemOutcome run_dsmem(const DsmemSpec&) { throw ProbeFailure(ErrorCode::Unsupported, "no thread block clusters on AMD"); }
ClusterLaunchOutcome run_cluster_launch(const ClusterLaunchSpec&, const hipDeviceProp_t&) {
  throw ProbeFailure(ErrorCode::Unsupported, "no thread block clusters on AMD");
}

#endif

}  // namespace topod::probe
