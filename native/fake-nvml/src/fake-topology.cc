// Fake NVML: how GPUs connect — NVLink remote device types, the closest
// common PCIe ancestor and peer-to-peer status of each pair (the scenario's
// top-level "links"), as `nvidia-smi topo -m` asks them.
#include "fake-api.h"

using namespace topod::fake;

namespace {

/** The scenario index of a physical GPU handle, or -1. */
int indexOf(nvmlDevice_t device) {
  FakeDevice* d = physical(device);
  if (!d) return -1;
  auto& devices = current()->devices;
  for (size_t i = 0; i < devices.size(); ++i)
    if (&devices[i] == d) return static_cast<int>(i);
  return -1;
}

}  // namespace

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link, nvmlIntNvLinkDeviceType_t* type) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  if (!type) return NVML_ERROR_INVALID_ARGUMENT;
  if (!d) return NVML_ERROR_NOT_SUPPORTED;
  for (const auto& [index, remote] : d->nvlinks) {
    if (index != link) continue;
    if (auto given = d->nvlinkRemoteTypes.find(link); given != d->nvlinkRemoteTypes.end()) {
      *type = static_cast<nvmlIntNvLinkDeviceType_t>(given->second);
      return NVML_SUCCESS;
    }
    *type = NVML_NVLINK_DEVICE_TYPE_SWITCH;
    for (const auto& other : current()->devices)
      if (other.pciBusId && *other.pciBusId == remote) *type = NVML_NVLINK_DEVICE_TYPE_GPU;
    return NVML_SUCCESS;
  }
  return NVML_ERROR_INVALID_ARGUMENT;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuTopologyLevel_t* level) {
  FAKE_ENTER();
  int a = indexOf(device1);
  int b = indexOf(device2);
  if (!level || a < 0 || b < 0) return NVML_ERROR_INVALID_ARGUMENT;
  const FakeDevicePair* pair = current()->pair(static_cast<unsigned>(a), static_cast<unsigned>(b));
  if (!pair || !pair->commonAncestor) return NVML_ERROR_NOT_SUPPORTED;
  *level = static_cast<nvmlGpuTopologyLevel_t>(*pair->commonAncestor);
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuP2PCapsIndex_t index,
                                                  nvmlGpuP2PStatus_t* status) {
  FAKE_ENTER();
  int a = indexOf(device1);
  int b = indexOf(device2);
  if (!status || a < 0 || b < 0) return NVML_ERROR_INVALID_ARGUMENT;
  // Like NVML: the call succeeds and the status says what is possible.
  *status = NVML_P2P_STATUS_NOT_SUPPORTED;
  if (const FakeDevicePair* pair = current()->pair(static_cast<unsigned>(a), static_cast<unsigned>(b))) {
    auto found = pair->p2p.find(static_cast<unsigned>(index));
    if (found != pair->p2p.end()) *status = static_cast<nvmlGpuP2PStatus_t>(found->second);
  }
  return NVML_SUCCESS;
}
