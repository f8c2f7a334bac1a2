// The traffic kernels (traffic.h). Plain C++ element accesses, as a user's
// kernel makes them (LDG/STG with the default cache policy, 4, 8 or 16 bytes
// wide): the question is what such an access costs in device-memory bytes, so
// no cache operator is forced. Neighbouring threads take neighbouring accesses
// (the paper's Listing 1), so at stride 1 a warp's accesses coalesce into whole
// sectors. scripts/device/sass-check.sh checks that every kernel keeps its
// loads and stores.
#include "traffic.h"

#include <algorithm>
#include <string>

#include "runtime.h"

namespace topod::probe {

namespace {

constexpr uint32_t kThreads = 256;
// Enough resident warps per SM to keep device memory busy; the grid-stride loop covers the rest.
constexpr uint32_t kBlocksPerSm = 16;
constexpr uint32_t kFlushThreads = 256;
constexpr uint32_t kFlushBlocksPerSm = 4;

__device__ __forceinline__ uint32_t fold(uint32_t v) { return v; }
__device__ __forceinline__ uint32_t fold(uint2 v) { return v.x ^ v.y; }
__device__ __forceinline__ uint32_t fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

template <typename T>
__device__ __forceinline__ T make(uint64_t k);
template <>
__device__ __forceinline__ uint32_t make<uint32_t>(uint64_t k) {
  return static_cast<uint32_t>(k);
}
template <>
__device__ __forceinline__ uint2 make<uint2>(uint64_t k) {
  return make_uint2(static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32));
}
template <>
__device__ __forceinline__ uint4 make<uint4>(uint64_t k) {
  return make_uint4(static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32), 1u, 2u);
}

__device__ __forceinline__ uint32_t bump(uint32_t v) { return v + 1; }
__device__ __forceinline__ uint2 bump(uint2 v) { return make_uint2(v.x + 1, v.y + 1); }
__device__ __forceinline__ uint4 bump(uint4 v) { return make_uint4(v.x + 1, v.y + 1, v.z + 1, v.w + 1); }

__device__ __forceinline__ uint32_t mul(uint32_t x, uint32_t y) { return x * y; }
__device__ __forceinline__ uint2 mul(uint2 x, uint2 y) { return make_uint2(x.x * y.x, x.y * y.y); }
__device__ __forceinline__ uint4 mul(uint4 x, uint4 y) { return make_uint4(x.x * y.x, x.y * y.y, x.z * y.z, x.w * y.w); }

// The read pattern folds every loaded value into one word stored only when `flag` (0 at run time) is set,
// so the compiler keeps every load. The others store, which it never drops.
template <typename T>
__global__ void read_kernel(const T* a, uint64_t accesses, uint64_t stride, const uint32_t* flag, uint32_t* sink) {
  uint32_t acc = 0;
  for (uint64_t k = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < accesses; k += uint64_t{gridDim.x} * blockDim.x)
    acc ^= fold(a[k * stride]);
  if (*flag) sink[threadIdx.x] = acc;
}

template <typename T>
__global__ void write_kernel(T* c, uint64_t accesses, uint64_t stride) {
  for (uint64_t k = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < accesses; k += uint64_t{gridDim.x} * blockDim.x)
    c[k * stride] = make<T>(k);
}

template <typename T>
__global__ void rmw_kernel(T* c, uint64_t accesses, uint64_t stride) {
  for (uint64_t k = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < accesses; k += uint64_t{gridDim.x} * blockDim.x)
    c[k * stride] = bump(c[k * stride]);
}

template <typename T>
__global__ void vecmul_kernel(const T* a, const T* b, T* c, uint64_t accesses, uint64_t stride) {
  for (uint64_t k = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < accesses; k += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t i = k * stride;
    c[i] = mul(a[i], b[i]);
  }
}

// Grid-stride 16-byte reads of the flush buffer (zero), folded; stored only when the fold equals `never` (1).
__global__ void traffic_flush_kernel(const uint4* data, uint64_t count, uint32_t never, uint32_t* sink) {
  uint32_t acc = 0;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += uint64_t{gridDim.x} * blockDim.x) acc ^= fold(data[i]);
  if (acc == never) *sink = acc;
}

template <typename T>
void launch_typed(TrafficPattern pattern, void* a, void* b, void* c, uint32_t* words, uint64_t accesses, uint64_t stride, uint32_t blocks) {
  switch (pattern) {
    case TrafficPattern::Read:
      read_kernel<T><<<blocks, kThreads>>>(static_cast<const T*>(a), accesses, stride, words, words + 1);
      break;
    case TrafficPattern::Write:
      write_kernel<T><<<blocks, kThreads>>>(static_cast<T*>(c), accesses, stride);
      break;
    case TrafficPattern::Rmw:
      rmw_kernel<T><<<blocks, kThreads>>>(static_cast<T*>(c), accesses, stride);
      break;
    case TrafficPattern::VecMul:
      vecmul_kernel<T><<<blocks, kThreads>>>(static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c), accesses, stride);
      break;
  }
}

void* device_alloc(uint64_t bytes) {
  void* p = nullptr;
  check(hipMalloc(&p, bytes), "hipMalloc");
  return p;
}

}  // namespace

TrafficArrays::TrafficArrays(uint64_t footprintBytes, uint64_t flushBytes, uint32_t multiprocessors)
    : footprintBytes_(footprintBytes), flushBytes_(flushBytes / 16 * 16), multiprocessors_(std::max(multiprocessors, 1u)) {
  try {
    words_ = static_cast<uint32_t*>(device_alloc((1 + kThreads + 1) * sizeof(uint32_t)));
    check(hipMemset(words_, 0, (1 + kThreads + 1) * sizeof(uint32_t)), "hipMemset");
    a_ = device_alloc(footprintBytes_);
    b_ = device_alloc(footprintBytes_);
    check(hipMemset(a_, 0x11, footprintBytes_), "hipMemset");
    check(hipMemset(b_, 0x22, footprintBytes_), "hipMemset");
    if (flushBytes_ > 0) {
      flushBuffer_ = device_alloc(flushBytes_);
      check(hipMemset(flushBuffer_, 0, flushBytes_), "hipMemset");
    }
    check(hipDeviceSynchronize(), "hipMemset");
  } catch (...) {
    this->~TrafficArrays();
    throw;
  }
}

TrafficArrays::~TrafficArrays() {
  for (void** p : {&a_, &b_, &c_, &flushBuffer_}) {
    if (*p) (void)hipFree(*p);
    *p = nullptr;
  }
  if (words_) (void)hipFree(words_);
  words_ = nullptr;
}

void TrafficArrays::prepare_target(TrafficTarget target) {
  if (target == TrafficTarget::Fresh || !c_) {
    if (c_) check(hipFree(c_), "hipFree");
    c_ = nullptr;
    c_ = device_alloc(footprintBytes_);
  }
  if (target == TrafficTarget::Written) check(hipMemset(c_, 0x33, footprintBytes_), "hipMemset");
  check(hipDeviceSynchronize(), "prepare the written array");
}

void TrafficArrays::flush() {
  if (!flushBuffer_) return;
  traffic_flush_kernel<<<multiprocessors_ * kFlushBlocksPerSm, kFlushThreads>>>(static_cast<const uint4*>(flushBuffer_), flushBytes_ / 16,
                                                                                1u, words_ + 1 + kThreads);
  check_launch("traffic_flush_kernel");
}

void TrafficArrays::launch(const TrafficCase& c) {
  const uint64_t accesses = traffic_accesses(footprintBytes_, c);
  const uint64_t wanted = (accesses + kThreads - 1) / kThreads;
  const uint32_t blocks =
      static_cast<uint32_t>(std::max<uint64_t>(1, std::min<uint64_t>(wanted, uint64_t{multiprocessors_} * kBlocksPerSm)));
  switch (c.elementBytes) {
    case 4:
      launch_typed<uint32_t>(c.pattern, a_, b_, c_, words_, accesses, c.strideElements, blocks);
      break;
    case 8:
      launch_typed<uint2>(c.pattern, a_, b_, c_, words_, accesses, c.strideElements, blocks);
      break;
    default:
      launch_typed<uint4>(c.pattern, a_, b_, c_, words_, accesses, c.strideElements, blocks);
      break;
  }
  check(hipGetLastError(), "traffic kernel launch");
}

std::vector<double> time_traffic_case(TrafficArrays& arrays, const TrafficCase& c, uint32_t repetitions) {
  EventTimer timer;
  std::vector<double> seconds;
  seconds.reserve(repetitions);
  for (uint32_t rep = 0; rep <= repetitions; ++rep) {
    arrays.prepare_target(c.target);
    arrays.flush();
    const double s = timer.seconds("traffic kernel", [&] { arrays.launch(c); });
    if (rep > 0) seconds.push_back(s);  // repetition 0 is the warm-up
  }
  return seconds;
}

}  // namespace topod::probe
