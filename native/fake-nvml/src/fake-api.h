// Helpers shared by the exported fake NVML entry points.
#pragma once

#include <cstring>
#include <string>

#include "scenario.h"

// Only the NVML entry points are visible; everything else is -fvisibility=hidden.
#define FAKE_NVML_API extern "C" __attribute__((visibility("default")))

// Every entry point starts here: scenario refresh, init check, injected failures.
#define FAKE_ENTER()                                                                                             \
  do {                                                                                                           \
    if (nvmlReturn_t enter_code = ::topod::fake::enter(__func__); enter_code != NVML_SUCCESS) return enter_code; \
  } while (0)

namespace topod::fake {

inline FakeHandle* handleOf(nvmlDevice_t device) { return reinterpret_cast<FakeHandle*>(device); }
inline nvmlDevice_t toDevice(FakeHandle* handle) { return reinterpret_cast<nvmlDevice_t>(handle); }

/** The physical GPU behind a handle, or nullptr for a MIG device / null handle. */
inline FakeDevice* physical(nvmlDevice_t device) {
  FakeHandle* handle = handleOf(device);
  return (handle && !handle->mig) ? handle->device : nullptr;
}

inline nvmlReturn_t copyString(const std::string& value, char* buffer, unsigned length) {
  if (!buffer) return NVML_ERROR_INVALID_ARGUMENT;
  if (value.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buffer, value.c_str(), value.size() + 1);
  return NVML_SUCCESS;
}

inline nvmlReturn_t copyOptionalString(const Opt<std::string>& value, char* buffer, unsigned length) {
  return value ? copyString(*value, buffer, length) : NVML_ERROR_NOT_SUPPORTED;
}

template <typename T>
nvmlReturn_t copyOptional(const Opt<T>& value, T* out) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (!value) return NVML_ERROR_NOT_SUPPORTED;
  *out = *value;
  return NVML_SUCCESS;
}

}  // namespace topod::fake
