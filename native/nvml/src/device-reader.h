// Identity, memory, clocks, PCIe, NUMA, CPU affinity and NVLink of one device,
// in groups: what a poll reads every time and what it may take from the
// static cache (static-cache.h).
#pragma once

#include "field-log.h"
#include "nvml-library.h"
#include "snapshot.h"

namespace topod::nvml {

Opt<std::string> readUuid(const Api& api, FieldLog& log, nvmlDevice_t device);
/** Total, used and free device memory (the v2 call's `used` leaves out driver-reserved memory). */
Opt<MemoryInfo> readMemory(const Api& api, FieldLog& log, nvmlDevice_t device);
/** Static: name, serial, PCI bus id, architecture. */
void readIdentity(const Api& api, FieldLog& log, nvmlDevice_t device, DeviceState& out);
/** Live: memory and BAR1 (total, used, free). */
void readUsage(const Api& api, FieldLog& log, nvmlDevice_t device, DeviceState& out);
/** Static: max clocks, bus width, max PCIe gen/width, NUMA node, CPU affinity. */
void readLimits(const Api& api, FieldLog& log, nvmlDevice_t device, DeviceState& out);
/** Live: current PCIe gen/width, NVLinks up. */
void readLinks(const Api& api, FieldLog& log, nvmlDevice_t device, DeviceState& out);

/** "0-3,8,10-11" from an NVML cpuSet bitmap of `words` unsigned longs. */
std::string cpuListFromMask(const unsigned long* mask, unsigned words);

}  // namespace topod::nvml
