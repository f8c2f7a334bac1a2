// MIG: GPU-instance profiles and placements (static, cached per MIG mode),
// GPU and compute instances, and the MIG device handles CUDA enumerates (live).
#pragma once

#include <map>
#include <vector>

#include "field-log.h"
#include "nvml-library.h"
#include "snapshot.h"
#include "static-cache.h"

namespace topod::nvml {

/** Every GPU-instance profile this GPU offers, with its possible placements where readable. */
std::vector<GpuInstanceProfile> readMigProfiles(const Api& api, FieldLog& log, nvmlDevice_t device);

/**
 * Existing GPU and compute instances and MIG devices, enumerated through
 * out.profiles; modeCode is what nvmlDeviceGetMigMode answered (out holds the
 * mode when it succeeded). Compute-instance profile tables, by GPU-instance
 * profile id, are taken from and added to computeProfiles.
 */
void readMigInstances(const Api& api, FieldLog& log, nvmlDevice_t device, nvmlReturn_t modeCode,
                      std::map<unsigned, ComputeProfileTable>& computeProfiles, DeviceState& out);

/**
 * Calls visit(index, handle) for each MIG device handle of `device`: empty
 * slots are skipped, a failed count or handle is logged under "migDevices".
 */
template <typename Visit>
void forEachMigDevice(const Api& api, FieldLog& log, nvmlDevice_t device, Visit visit) {
  unsigned maxCount = 0;
  if (!log.check(invoke(api.deviceGetMaxMigDeviceCount, device, &maxCount), "migDevices")) return;
  for (unsigned index = 0; index < maxCount; ++index) {
    nvmlDevice_t mig = nullptr;
    nvmlReturn_t code = invoke(api.deviceGetMigDeviceHandleByIndex, device, index, &mig);
    if (code == NVML_ERROR_NOT_FOUND) continue;  // an empty slot, not a failure
    if (!log.check(code, "migDevices")) continue;
    visit(index, mig);
  }
}

}  // namespace topod::nvml
