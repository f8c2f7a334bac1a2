// The l2.farnear kernel (l2-farnear.h). The timed load follows the pchase
// discipline: start clock, load, store the loaded value to a shared sink, stop
// clock; its address depends on the value loaded before it (`& zero`), so
// ptxas cannot issue it ahead of the start clock or of the chunk before.
#include "l2-farnear.h"

#include <string>

#include "device-ops.h"
#include "probe-error.h"
#include "runtime.h"

namespace topod::probe {

namespace {

constexpr uint32_t kLineWords = 32;  // one touch per 128 B line
constexpr uint32_t kThreads = 256;
constexpr uint32_t kMaxChosen = 2;

struct FarnearLaunch {
  const uint32_t* array;
  uint64_t arrayStrideElems;  // 0 in shared mode: every chosen SM reads the same array
  uint32_t smIds[kMaxChosen];
  uint32_t chosen;
  uint32_t chunkElems;
  uint32_t chunks;
  uint32_t lineCount;  // lines of the whole array
  uint32_t passes;
  uint32_t shared;
  uint32_t zero;  // 0 at run time, unknown to the compiler
  uint64_t budgetNs;
  uint32_t* claimed;       // per chosen SM: 1 once a block took it
  uint32_t* arrived;       // blocks started
  uint32_t* turn;          // the step now allowed to run
  uint32_t* outLatencies;  // chosen * chunks
  uint32_t* status;        // 1: timed out, 2: a chosen SM never ran a block
};

// The step numbers of role r's passes (see l2-farnear.h for the order).
__device__ uint32_t step_of(const FarnearLaunch& a, uint32_t role, uint32_t pass) {
  if (!a.shared) return role * a.passes + pass;
  return pass * a.chosen + role;
}

__global__ void farnear_kernel(FarnearLaunch a) {
  extern __shared__ uint32_t smem[];  // chunks latencies, the sink word, the role and abort words
  uint32_t* latencies = smem;
  uint32_t* sink = smem + a.chunks;
  uint32_t* role = sink + 1;
  uint32_t* abort = sink + 2;
  if (threadIdx.x == 0) {
    atomicAdd(a.arrived, 1u);
    const uint32_t sm = ops::sm_id();
    *role = kMaxChosen;
    for (uint32_t r = 0; r < a.chosen; ++r)
      if (a.smIds[r] == sm && atomicCAS(a.claimed + r, 0u, 1u) == 0u) *role = r;
    *abort = 0;
  }
  __syncthreads();
  const uint32_t r = *role;
  if (r == kMaxChosen) return;
  const uint32_t* base = a.array + a.arrayStrideElems * r;
  const uint64_t deadline = ops::globaltimer_ns() + a.budgetNs;
  const uint32_t linesPerChunk = a.chunkElems / kLineWords;
  uint32_t dep = 0;
  for (uint32_t pass = 0; pass < a.passes; ++pass) {
    const uint32_t step = step_of(a, r, pass);
    if (threadIdx.x == 0) {
      // Wait for this step's turn; give up when every block has started and a chosen SM is still unclaimed, or at the deadline.
      while (*reinterpret_cast<volatile uint32_t*>(a.turn) != step) {
        bool missing = false;
        if (*reinterpret_cast<volatile uint32_t*>(a.arrived) == gridDim.x)
          for (uint32_t k = 0; k < a.chosen; ++k) missing |= *reinterpret_cast<volatile uint32_t*>(a.claimed + k) == 0u;
        if (missing || ops::globaltimer_ns() > deadline) {
          atomicMax(a.status, missing ? 2u : 1u);
          *abort = 1;
          break;
        }
      }
    }
    __syncthreads();
    if (*abort) return;
    const bool timed = pass + 1 == a.passes;
#pragma unroll 1
    for (uint32_t c = 0; c < a.chunks; ++c) {
      const uint32_t* chunk = base + uint64_t{c} * a.chunkElems;
      if (threadIdx.x == 0) {
        if (timed) {
          // The address depends on the start clock's value too: the previous chunk's value is known long before,
          // and an H100 showed 4-cycle "latencies" when that was the only dependency (ptxas issued the load first).
          const uint32_t t0 = ops::clock32();
          dep = ops::load_global_cg(chunk + ((dep ^ t0) & a.zero));
          ops::consume(sink, dep);
          const uint32_t t1 = ops::clock32();
          latencies[c] = t1 - t0;
        } else {
          dep = ops::load_global_cg(chunk + (dep & a.zero));
          ops::consume(sink, dep);
        }
      }
      __syncthreads();  // the chunk's first line before the rest
      for (uint32_t line = 1 + threadIdx.x; line < linesPerChunk; line += blockDim.x)
        ops::consume(sink, ops::load_global_cg(chunk + uint64_t{line} * kLineWords));
      __syncthreads();
      if (threadIdx.x == 0 && (c & 255u) == 255u && ops::globaltimer_ns() > deadline) {
        atomicMax(a.status, 1u);
        *abort = 1;
      }
      __syncthreads();
      if (*abort) break;
    }
    // The lines past the last whole chunk belong to no chunk; touch them too so the footprint is arrayBytes.
    for (uint32_t line = a.chunks * linesPerChunk + threadIdx.x; line < a.lineCount; line += blockDim.x)
      ops::consume(sink, ops::load_global_cg(base + uint64_t{line} * kLineWords));
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      atomicAdd(a.turn, 1u);  // the next step may start (a timed-out walk hands on too)
    }
    if (*abort) return;
  }
  if (threadIdx.x == 0) {
    uint32_t* out = a.outLatencies + uint64_t{r} * a.chunks;
    for (uint32_t c = 0; c < a.chunks; ++c) out[c] = latencies[c];
  }
}

}  // namespace

std::vector<FarnearRun> run_l2_farnear(const FarnearSpec& spec, uint32_t blocks, uint32_t sharedLimitBytes, uint64_t budgetNs) {
  const uint32_t chosen = static_cast<uint32_t>(spec.smIds.size());
  const uint64_t arrayElems = spec.arrayBytes / 4;
  DeviceBuffer<uint32_t> array(spec.shared ? arrayElems : arrayElems * chosen);
  array.zero();
  DeviceBuffer<uint32_t> words(chosen + 3), latencies(uint64_t{chosen} * spec.chunks);
  words.zero();
  latencies.zero();
  // The whole shared-memory limit keeps a second block off every SM.
  check(hipFuncSetAttribute(reinterpret_cast<const void*>(farnear_kernel), hipFuncAttributeMaxDynamicSharedMemorySize,
                            static_cast<int>(sharedLimitBytes)),
        "hipFuncSetAttribute(farnear_kernel)");
  FarnearLaunch launch{};
  launch.array = array.get();
  launch.arrayStrideElems = spec.shared ? 0 : arrayElems;
  for (uint32_t r = 0; r < chosen; ++r) launch.smIds[r] = spec.smIds[r];
  launch.chosen = chosen;
  launch.chunkElems = spec.strideBytes / 4;
  launch.chunks = spec.chunks;
  launch.lineCount = static_cast<uint32_t>(spec.arrayBytes / (kLineWords * 4));
  launch.passes = spec.passes;
  launch.shared = spec.shared ? 1u : 0u;
  launch.zero = 0;
  launch.budgetNs = budgetNs;
  uint32_t* w = words.get();
  launch.claimed = w;
  launch.arrived = w + chosen;
  launch.turn = w + chosen + 1;
  launch.status = w + chosen + 2;
  launch.outLatencies = latencies.get();
  farnear_kernel<<<blocks, kThreads, sharedLimitBytes>>>(launch);
  check_launch("farnear_kernel");
  std::vector<uint32_t> host(chosen + 3);
  words.download(host.data(), host.size());
  for (uint32_t r = 0; r < chosen; ++r)
    if (host[r] == 0) throw ProbeFailure(ErrorCode::Unsupported, "sm " + std::to_string(spec.smIds[r]) + " never ran a block");
  if (host[chosen + 2] != 0) throw ProbeFailure(ErrorCode::Timeout, "l2.farnear overran its deadline on the device");
  std::vector<uint32_t> hostLatencies(uint64_t{chosen} * spec.chunks);
  latencies.download(hostLatencies.data(), hostLatencies.size());
  std::vector<FarnearRun> runs;
  for (uint32_t r = 0; r < chosen; ++r) {
    const auto from = hostLatencies.begin() + static_cast<std::ptrdiff_t>(uint64_t{r} * spec.chunks);
    runs.push_back(FarnearRun{spec.smIds[r], std::vector<uint32_t>(from, from + spec.chunks)});
  }
  return runs;
}

}  // namespace topod::probe
