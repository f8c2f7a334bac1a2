// Identity, memory, clocks, PCIe, NUMA, CPU affinity and NVLink of one device.
#pragma once

#include "nvml-library.h"
#include "snapshot.h"

namespace topod::nvml {

void readDeviceFields(const Api& api, nvmlDevice_t device, DeviceState& out);

/** "0-3,8,10-11" from an NVML cpuSet bitmap of `words` unsigned longs. */
std::string cpuListFromMask(const unsigned long* mask, unsigned words);

}  // namespace topod::nvml
