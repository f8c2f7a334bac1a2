// How each pair of GPUs is connected — the closest common PCIe ancestor and
// peer-to-peer status over PCIe and NVLink, what `nvidia-smi topo -m` and
// `topo -p2p` print — read once per pair and cached like the static fields
// (the wiring of a board changes only with the hardware or the driver).
#pragma once

#include <string>
#include <vector>

#include "device-read.h"
#include "nvml-library.h"
#include "snapshot.h"

namespace topod::nvml {

struct PairInput {
  unsigned index = 0;
  nvmlDevice_t handle = nullptr;
  Opt<std::string> uuid;
};

/**
 * Every pair of the devices given (by ascending index). A pair is re-read
 * when either UUID is unknown, the NVML session or driver changed, or its
 * cached answer is older than policy.maxAge.
 */
std::vector<DevicePair> readPairs(const Api& api, const std::vector<PairInput>& devices, const StaticPolicy& policy);

}  // namespace topod::nvml
