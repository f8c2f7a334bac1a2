// The l2.partition kernel (l2-partition.h). The timed load follows the
// pchase discipline: start clock, load, store the loaded value to a shared
// sink, stop clock (in-order issue makes the stop clock wait for the load).
#include "l2-partition.h"

#include <string>

#include "device-ops.h"
#include "probe-error.h"
#include "runtime.h"

namespace topod::probe {

namespace {

struct PartitionLaunch {
  const uint32_t* array;
  uint64_t blockStrideElems;  // 0 in shared mode: every block reads the same array
  uint32_t chunkElems;
  uint32_t chunks;
  uint32_t stagger;  // 1: block b starts at chunk b * chunks / gridDim.x
  uint32_t zero;     // 0 at run time, unknown to the compiler: ties each load's address to the load before it
  uint64_t budgetNs;
  uint32_t* outSm;         // per block
  uint32_t* outLatencies;  // blocks * chunks
  uint32_t* timedOut;
};

__global__ void partition_kernel(PartitionLaunch a) {
  extern __shared__ uint32_t smem[];  // chunks latencies, then the sink word
  if (threadIdx.x != 0) return;
  uint32_t* latencies = smem;
  uint32_t* sink = smem + a.chunks;
  const uint32_t* base = a.array + a.blockStrideElems * blockIdx.x;
  const uint32_t first = a.stagger ? static_cast<uint32_t>((uint64_t{blockIdx.x} * a.chunks) / gridDim.x) : 0u;
  const uint64_t deadline = ops::globaltimer_ns() + a.budgetNs;
  uint32_t dep = 0;
#pragma unroll 1
  for (uint32_t k = 0; k < a.chunks; ++k) {
    uint32_t c = first + k;
    if (c >= a.chunks) c -= a.chunks;
    // This SM's own touch of the chunk, waited for before the clock starts.
    // Each load's address depends on the value before it (`& zero`), so ptxas
    // cannot issue the timed load ahead of the start clock or the touch.
    const uint32_t* p = base + uint64_t{c} * a.chunkElems + (dep & a.zero);
    const uint32_t touched = ops::load_global_cg(p);
    ops::consume(sink, touched);
    const uint32_t t0 = ops::clock32();
    dep = ops::load_global_cg(p + (touched & a.zero));
    ops::consume(sink, dep);
    const uint32_t t1 = ops::clock32();
    latencies[c] = t1 - t0;
    if ((k & 255u) == 255u && ops::globaltimer_ns() > deadline) {
      atomicExch(a.timedOut, 1u);
      break;
    }
  }
  a.outSm[blockIdx.x] = ops::sm_id();
  uint32_t* out = a.outLatencies + uint64_t{blockIdx.x} * a.chunks;
  for (uint32_t c = 0; c < a.chunks; ++c) out[c] = latencies[c];
}

}  // namespace

std::vector<PartitionRun> run_l2_partition(const PartitionSpec& spec, uint32_t blocks, uint32_t sharedLimitBytes, uint64_t budgetNs) {
  const bool shared = spec.mode == PartitionMode::Shared;
  const uint64_t arrayElems = spec.arrayBytes / 4;
  DeviceBuffer<uint32_t> array(shared ? arrayElems : arrayElems * blocks);
  array.zero();
  DeviceBuffer<uint32_t> smIds(blocks), latencies(uint64_t{blocks} * spec.chunks), flag(1);
  flag.zero();
  // The whole shared-memory limit keeps a second block off every SM.
  check(hipFuncSetAttribute(reinterpret_cast<const void*>(partition_kernel), hipFuncAttributeMaxDynamicSharedMemorySize,
                            static_cast<int>(sharedLimitBytes)),
        "hipFuncSetAttribute(partition_kernel)");
  const PartitionLaunch launch{
      array.get(), shared ? 0 : arrayElems, spec.strideBytes / 4, spec.chunks, shared ? 1u : 0u, 0u, budgetNs, smIds.get(), latencies.get(),
      flag.get()};
  partition_kernel<<<blocks, 32, sharedLimitBytes>>>(launch);
  check_launch("partition_kernel");
  uint32_t timedOut = 0;
  flag.download(&timedOut, 1);
  if (timedOut) throw ProbeFailure(ErrorCode::Timeout, "l2.partition overran its deadline on the device");
  std::vector<uint32_t> hostSm(blocks), hostLatencies(uint64_t{blocks} * spec.chunks);
  smIds.download(hostSm.data(), blocks);
  latencies.download(hostLatencies.data(), hostLatencies.size());
  std::vector<PartitionRun> runs;
  runs.reserve(blocks);
  for (uint32_t b = 0; b < blocks; ++b) {
    const auto from = hostLatencies.begin() + static_cast<std::ptrdiff_t>(uint64_t{b} * spec.chunks);
    runs.push_back(PartitionRun{hostSm[b], std::vector<uint32_t>(from, from + spec.chunks)});
  }
  return runs;
}

}  // namespace topod::probe
