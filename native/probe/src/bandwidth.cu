#include "bandwidth.h"

#include "device-ops.h"
#include "runtime.h"

namespace topod::probe {

namespace {

// 16-byte loads each thread issues before it uses any (bytes in flight per
// thread = 16 × kUnroll); the launch geometry scales the rest.
constexpr uint32_t kUnroll = 4;

template <CacheHint H>
__device__ __forceinline__ uint4 load_v4(const uint4* p) {
  if constexpr (H == CacheHint::Cg)
    return ops::load_global_cg_v4(p);
  else
    return ops::load_global_v4(p);
}

__device__ __forceinline__ uint32_t fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

// `passes` grid-stride passes of 16-byte loads, summed into one word (a sum, so
// two passes' values do not cancel); the store to `sink` is guarded by a flag
// that is false at run time, so the loads cannot be elided.
template <CacheHint H>
__global__ void read_kernel(const uint4* data, uint64_t count, uint32_t passes, const uint32_t* storeFlag, uint32_t* sink) {
  uint32_t acc = 0;
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  const uint64_t first = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (uint32_t pass = 0; pass < passes; ++pass) {
    uint64_t i = first;
    for (; i + (kUnroll - 1) * stride < count; i += kUnroll * stride) {
      uint4 v[kUnroll];
#pragma unroll
      for (uint32_t k = 0; k < kUnroll; ++k) v[k] = load_v4<H>(data + i + k * stride);
#pragma unroll
      for (uint32_t k = 0; k < kUnroll; ++k) acc += fold(v[k]);
    }
    for (; i < count; i += stride) acc += fold(load_v4<H>(data + i));
  }
  if (*storeFlag) sink[first] = acc;
}

// `passes` grid-stride passes of full 16-byte stores (whole sectors: no read-for-fill).
__global__ void write_kernel(uint4* data, uint64_t count, uint32_t passes, uint32_t value) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint32_t pass = 0; pass < passes; ++pass) {
    for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
      ops::store_global_v4(data + i, make_uint4(value, pass, static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32)));
    }
  }
}

// One untimed warm-up run of `launch`, then `repetitions` runs each between two events.
template <typename Launch>
std::vector<double> time_repetitions(uint32_t repetitions, const char* what, Launch launch) {
  launch(0);
  check_launch(what);
  EventTimer timer;
  std::vector<double> seconds;
  seconds.reserve(repetitions);
  for (uint32_t rep = 1; rep <= repetitions; ++rep) seconds.push_back(timer.seconds(what, [&] { launch(rep); }));
  return seconds;
}

}  // namespace

std::vector<double> run_bandwidth(const BandwidthSpec& spec) {
  const uint64_t count = spec.arrayBytes / 16;
  DeviceBuffer<uint4> data(count);
  data.zero();
  DeviceBuffer<uint32_t> storeFlag(1);
  storeFlag.zero();
  DeviceBuffer<uint32_t> sink(uint64_t{spec.blocks} * spec.threadsPerBlock);

  return time_repetitions(spec.repetitions, "bandwidth kernel", [&](uint32_t rep) {
    if (spec.mode == BandwidthMode::Write) {
      write_kernel<<<spec.blocks, spec.threadsPerBlock>>>(data.get(), count, spec.passes, rep);
    } else if (spec.cacheHint == CacheHint::Cg) {
      read_kernel<CacheHint::Cg><<<spec.blocks, spec.threadsPerBlock>>>(data.get(), count, spec.passes, storeFlag.get(), sink.get());
    } else {
      read_kernel<CacheHint::Default><<<spec.blocks, spec.threadsPerBlock>>>(data.get(), count, spec.passes, storeFlag.get(), sink.get());
    }
  });
}

std::vector<double> run_bandwidth_copy(const BandwidthCopySpec& spec) {
  DeviceBuffer<uint4> source(spec.arrayBytes / 16);
  DeviceBuffer<uint4> target(spec.arrayBytes / 16);
  source.zero();
  target.zero();
  // Stream-ordered on the null stream between the two events; the runtime picks its own copy kernel or engine.
  return time_repetitions(spec.repetitions, "bandwidth copy", [&](uint32_t) {
    check(hipMemcpy(target.get(), source.get(), spec.arrayBytes, hipMemcpyDeviceToDevice), "hipMemcpy device to device");
  });
}

}  // namespace topod::probe
