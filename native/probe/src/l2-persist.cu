// The l2.persist kernels (l2-persist.h): a grid-wide stream of one .cg load
// per 128 B line, and one thread timing the sampled window lines (pchase
// discipline: start clock, load, consume into a shared sink, stop clock; each
// address depends on the value before it).
#include "l2-persist.h"

#include <string>

#include "chase-types.h"
#include "device-ops.h"
#include "probe-error.h"
#include "runtime.h"

namespace topod::probe {

namespace {

constexpr uint32_t kLineWords = 32;
constexpr uint32_t kStreamThreads = 256;

__global__ void persist_stream_kernel(const uint32_t* array, uint64_t lines, uint32_t* sink) {
  uint32_t acc = 0;
  for (uint64_t line = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; line < lines; line += uint64_t{gridDim.x} * blockDim.x)
    acc ^= ops::load_global_cg(array + line * kLineWords);
  if (acc == 0xffffffffu) ops::consume(sink, acc);  // runtime-false: keeps the loads
}

__global__ void persist_timed_kernel(const uint32_t* array, const uint32_t* offsetsElems, uint32_t samples, uint32_t zero, uint32_t* out) {
  extern __shared__ uint32_t smem[];  // samples latencies, then the sink word
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  uint32_t* sink = smem + samples;
  uint32_t dep = 0;
#pragma unroll 1
  for (uint32_t i = 0; i < samples; ++i) {
    const uint32_t* p = array + offsetsElems[i] + (dep & zero);
    const uint32_t t0 = ops::clock32();
    dep = ops::load_global_cg(p + (t0 & zero));  // the address waits for the start clock: the load cannot issue before it
    ops::consume(sink, dep);
    const uint32_t t1 = ops::clock32();
    smem[i] = t1 - t0;
  }
  for (uint32_t i = 0; i < samples; ++i) out[i] = smem[i];
}

#if defined(TOPOD_VENDOR_NVIDIA)
// Reads the persisting set-aside at construction and restores it, with the
// persisting lines reset, whatever way the run leaves (errors included).
class PersistingLimitGuard {
 public:
  PersistingLimitGuard() {
    check(cudaDeviceGetLimit(&saved_, cudaLimitPersistingL2CacheSize), "cudaDeviceGetLimit(cudaLimitPersistingL2CacheSize)");
  }
  ~PersistingLimitGuard() {
    (void)cudaCtxResetPersistingL2Cache();
    (void)cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, saved_);
  }
  PersistingLimitGuard(const PersistingLimitGuard&) = delete;
  PersistingLimitGuard& operator=(const PersistingLimitGuard&) = delete;

 private:
  size_t saved_ = 0;
};

class OwnedStream {
 public:
  OwnedStream() { check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~OwnedStream() { (void)cudaStreamDestroy(s_); }
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_{};
};

// A runtime refusal of the window (MIG, no persisting L2) is `unsupported`, not an internal error.
void check_window(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();
  throw ProbeFailure(ErrorCode::Unsupported,
                     std::string(what) + " refused: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}
#endif

}  // namespace

PersistRun run_l2_persist(const PersistSpec& spec, uint32_t streamBlocks, uint64_t budgetNs) {
  (void)budgetNs;  // two short launches per pass; the request loop's own deadline covers them
#if defined(TOPOD_VENDOR_NVIDIA)
  int maxPersisting = 0;
  check(cudaDeviceGetAttribute(&maxPersisting, cudaDevAttrMaxPersistingL2CacheSize, 0), "cudaDeviceGetAttribute(MaxPersistingL2CacheSize)");
  if (maxPersisting <= 0)
    throw ProbeFailure(ErrorCode::Unsupported,
                       "this device has no persisting L2 (cudaDevAttrMaxPersistingL2CacheSize is 0; MIG instances have none)");
  const uint64_t arrayElems = spec.arrayBytes / 4;
  DeviceBuffer<uint32_t> array(arrayElems), sink(1), out(spec.samples), offsets(spec.samples);
  array.zero();
  std::vector<uint32_t> hostOffsets(spec.samples);
  for (uint32_t i = 0; i < spec.samples; ++i) hostOffsets[i] = static_cast<uint32_t>(persist_sample_offset(spec, i) / 4);
  offsets.upload(hostOffsets.data(), hostOffsets.size());
  const uint32_t timedShared = static_cast<uint32_t>(samples_shared_bytes(spec.samples));
  PersistingLimitGuard guard;
  OwnedStream stream;
  const uint64_t lines = spec.arrayBytes / (kLineWords * 4);
  auto pass = [&](std::vector<uint32_t>& latencies) {
    // Twice over the array (the first pass leaves the window's lines marked, the second streams past them), then the timed sample.
    for (int k = 0; k < 2; ++k) persist_stream_kernel<<<streamBlocks, kStreamThreads, 0, stream.get()>>>(array.get(), lines, sink.get());
    persist_timed_kernel<<<1, 32, timedShared, stream.get()>>>(array.get(), offsets.get(), spec.samples, 0u, out.get());
    check(cudaGetLastError(), "l2.persist launch");
    check(cudaStreamSynchronize(stream.get()), "l2.persist kernels");
    latencies.resize(spec.samples);
    out.download(latencies.data(), spec.samples);
  };
  PersistRun run{};
  pass(run.withoutCycles);
  check_window(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, static_cast<size_t>(spec.windowBytes)),
               "cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize)");
  size_t granted = 0;
  check(cudaDeviceGetLimit(&granted, cudaLimitPersistingL2CacheSize), "cudaDeviceGetLimit(cudaLimitPersistingL2CacheSize)");
  run.persistingLimitBytes = granted;
  cudaStreamAttrValue attr{};
  attr.accessPolicyWindow.base_ptr = array.get();
  attr.accessPolicyWindow.num_bytes = static_cast<size_t>(spec.windowBytes);
  attr.accessPolicyWindow.hitRatio = static_cast<float>(spec.hitRatio);
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  check_window(cudaStreamSetAttribute(stream.get(), cudaStreamAttributeAccessPolicyWindow, &attr),
               "cudaStreamSetAttribute(accessPolicyWindow)");
  pass(run.withCycles);
  attr.accessPolicyWindow.num_bytes = 0;  // the window off before the guard resets the lines
  (void)cudaStreamSetAttribute(stream.get(), cudaStreamAttributeAccessPolicyWindow, &attr);
  return run;
#else
  (void)spec;
  (void)streamBlocks;
  throw ProbeFailure(ErrorCode::Unsupported, "AMD GPUs have no persisting L2 access-policy window");
#endif
}

}  // namespace topod::probe
