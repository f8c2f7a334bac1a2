// Per-field NVML error handling: a refused field is recorded and left empty;
// a session-lost code aborts the whole read so the caller can re-initialise.
#pragma once

#include <string>
#include <vector>

#include "nvml-return.h"
#include "nvml-subset.h"

namespace topod::nvml {

/** Thrown out of a read when NVML must be torn down and initialised again. */
struct SessionLost {
  nvmlReturn_t code;
};

class FieldLog {
 public:
  explicit FieldLog(std::vector<std::string>& degraded) : degraded_(degraded) {}

  /** true on success; otherwise records "field: NO_PERMISSION" and returns false. */
  bool check(nvmlReturn_t code, const std::string& field) {
    if (code == NVML_SUCCESS) return true;
    if (isSessionLost(code)) throw SessionLost{code};
    if (!isLasting(code)) transient_ = true;
    add(field + ": " + returnShortName(code));
    return false;
  }

  /** Records entries a cached read met earlier, deduplicated as check() would. */
  void replay(const std::vector<std::string>& entries) {
    for (const auto& entry : entries) add(entry);
  }

  /** A refusal this log recorded may not last (TIMEOUT, UNKNOWN, ...): its result is not worth caching. */
  bool sawTransient() const { return transient_; }

 private:
  // Answers that stay the same for as long as the driver, the GPU and its MIG mode do.
  static bool isLasting(nvmlReturn_t code) {
    return code == NVML_ERROR_NOT_SUPPORTED || code == NVML_ERROR_NO_PERMISSION || code == NVML_ERROR_FUNCTION_NOT_FOUND ||
           code == NVML_ERROR_INVALID_ARGUMENT || code == NVML_ERROR_ARGUMENT_VERSION_MISMATCH || code == NVML_ERROR_NOT_FOUND;
  }

  void add(std::string entry) {
    // One entry per condition: every profile refusing placements is one fact.
    for (const auto& existing : degraded_)
      if (existing == entry) return;
    degraded_.push_back(std::move(entry));
  }

  std::vector<std::string>& degraded_;
  bool transient_ = false;
};

/** Calls fn when this libnvidia-ml exports it, else FUNCTION_NOT_FOUND. */
template <typename Fn, typename... Args>
nvmlReturn_t invoke(Fn fn, Args... args) {
  return fn ? fn(args...) : NVML_ERROR_FUNCTION_NOT_FOUND;
}

/** NUL-terminated copy of a fixed NVML char buffer. */
inline std::string fromBuffer(const char* buffer, size_t size) {
  size_t length = 0;
  while (length < size && buffer[length] != '\0') ++length;
  return std::string(buffer, length);
}

}  // namespace topod::nvml
