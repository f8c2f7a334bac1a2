#include "bandwidth.h"

#include "runtime.h"

namespace topod::probe {

namespace {

// Grid-stride 16-byte loads folded into one word; the store to `sink` is
// guarded by a flag that is false at run time, so the loads cannot be elided.
__global__ void read_kernel(const uint4* data, uint64_t count, const uint32_t* storeFlag, uint32_t* sink) {
  uint32_t acc = 0;
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    const uint4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (*storeFlag) sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

__global__ void write_kernel(uint4* data, uint64_t count, uint32_t value) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    data[i] = make_uint4(value, value, value, static_cast<uint32_t>(i));
  }
}

class Event {
 public:
  Event() { check(hipEventCreate(&e_), "hipEventCreate"); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { (void)hipEventDestroy(e_); }
  hipEvent_t get() const { return e_; }

 private:
  hipEvent_t e_{};
};

}  // namespace

std::vector<double> run_bandwidth(const BandwidthSpec& spec) {
  const uint64_t count = spec.arrayBytes / 16;
  DeviceBuffer<uint4> data(count);
  data.zero();
  DeviceBuffer<uint32_t> storeFlag(1);
  storeFlag.zero();
  DeviceBuffer<uint32_t> sink(uint64_t{spec.blocks} * spec.threadsPerBlock);

  auto launch = [&](uint32_t rep) {
    if (spec.mode == BandwidthMode::Read) {
      read_kernel<<<spec.blocks, spec.threadsPerBlock>>>(data.get(), count, storeFlag.get(), sink.get());
    } else {
      write_kernel<<<spec.blocks, spec.threadsPerBlock>>>(data.get(), count, rep);
    }
  };

  launch(0);
  check_launch("bandwidth warm-up");
  Event start, stop;
  std::vector<double> seconds;
  seconds.reserve(spec.repetitions);
  for (uint32_t rep = 1; rep <= spec.repetitions; ++rep) {
    check(hipEventRecord(start.get(), nullptr), "hipEventRecord");
    launch(rep);
    check(hipEventRecord(stop.get(), nullptr), "hipEventRecord");
    check(hipEventSynchronize(stop.get()), "bandwidth kernel");
    check(hipGetLastError(), "bandwidth kernel");
    float ms = 0;
    check(hipEventElapsedTime(&ms, start.get(), stop.get()), "hipEventElapsedTime");
    seconds.push_back(ms / 1e3);
  }
  return seconds;
}

}  // namespace topod::probe
