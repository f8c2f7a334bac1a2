// One device's state: the live fields read every time, the static ones taken
// from the StaticCache while its key holds (see static-cache.h).
#pragma once

#include <chrono>

#include "nvml-library.h"
#include "snapshot.h"
#include "static-cache.h"

namespace topod::nvml {

struct StaticPolicy {
  /** Session and driver of this read; each device adds its MIG mode. */
  StaticKey base;
  /** 0 = read everything afresh (and refresh the cache). */
  std::chrono::milliseconds maxAge = kStaticRefreshInterval;
  StaticCache::Clock::time_point now;
};

void readDevice(const Api& api, nvmlDevice_t handle, const StaticPolicy& policy, StaticCache& cache, DeviceState& device);

}  // namespace topod::nvml
