// MIG: mode, GPU-instance profiles and placements, GPU and compute instances,
// and the MIG device handles CUDA enumerates.
#pragma once

#include "nvml-library.h"
#include "snapshot.h"

namespace topod::nvml {

void readMigState(const Api& api, nvmlDevice_t device, DeviceState& out);

}  // namespace topod::nvml
