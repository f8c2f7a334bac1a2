// Runtime helpers shared by every operation: error mapping, owned device
// buffers, free-memory checks, event timing. Errors become ProbeFailure with a protocol code.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "hip-compat.h"
#include "probe-error.h"

namespace topod::probe {

inline void check(hipError_t err, const char* what) {
  if (err == hipSuccess) return;
  const std::string message = std::string(what) + ": " + hipGetErrorName(err) + " (" + hipGetErrorString(err) + ")";
  if (err == hipErrorMemoryAllocation) throw ProbeFailure(ErrorCode::OutOfMemory, message);
  if (compat::is_sticky_fault(err)) throw ProbeFailure(ErrorCode::KernelFault, message);
  throw ProbeFailure(ErrorCode::Internal, message);
}

// Launch errors surface on hipGetLastError, execution errors on synchronize.
inline void check_launch(const char* kernel) {
  check(hipGetLastError(), kernel);
  check(hipDeviceSynchronize(), kernel);
}

// What the runtime may still need beside a request's buffers (validate.ts, rule 4).
constexpr size_t kRuntimeMarginBytes = size_t{64} << 20;

// Throws out_of_memory unless `bytes` fit in free device memory, keeping a margin for the runtime.
inline void ensure_fits(size_t bytes, const char* what) {
  size_t freeBytes = 0, totalBytes = 0;
  check(hipMemGetInfo(&freeBytes, &totalBytes), "hipMemGetInfo");
  const size_t marginBytes = kRuntimeMarginBytes;
  if (bytes + marginBytes > freeBytes) {
    throw ProbeFailure(ErrorCode::OutOfMemory, std::string(what) + " needs " + std::to_string(bytes) + " bytes; the device has " +
                                                   std::to_string(freeBytes) + " free");
  }
}

// An owned device allocation, freed when it goes out of scope.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count == 0) return;
    void* p = nullptr;
    check(hipMalloc(&p, count * sizeof(T)), "hipMalloc");
    ptr_ = static_cast<T*>(p);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  T* get() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

  void zero() { check(hipMemset(ptr_, 0, bytes()), "hipMemset"); }
  void upload(const T* host, size_t count) {
    check(hipMemcpy(ptr_, host, count * sizeof(T), hipMemcpyHostToDevice), "hipMemcpy to device");
  }
  void download(T* host, size_t count) const {
    check(hipMemcpy(host, ptr_, count * sizeof(T), hipMemcpyDeviceToHost), "hipMemcpy to host");
  }

 private:
  void release() {
    if (ptr_) (void)hipFree(ptr_);
    ptr_ = nullptr;
  }
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

// A runtime event, destroyed when it goes out of scope.
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

// Times launches on the default stream between two events, created once and
// reused. A launch or execution error of the timed work reports as `what`.
class EventTimer {
 public:
  template <typename Launch>
  double seconds(const char* what, Launch&& launch) {
    check(hipEventRecord(start_.get(), nullptr), "hipEventRecord");
    launch();
    check(hipEventRecord(stop_.get(), nullptr), "hipEventRecord");
    check(hipEventSynchronize(stop_.get()), what);
    check(hipGetLastError(), what);
    float ms = 0;
    check(hipEventElapsedTime(&ms, start_.get(), stop_.get()), "hipEventElapsedTime");
    return ms / 1e3;
  }

 private:
  Event start_, stop_;
};

}  // namespace topod::probe
