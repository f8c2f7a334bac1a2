// Fake NVML: MIG mode, GPU-instance profiles and placements, GPU and compute instances.
#include <algorithm>
#include <cstring>

#include "fake-api.h"

using namespace topod::fake;

namespace {

// Compute-instance profile index → compute slices (NVML_COMPUTE_INSTANCE_PROFILE_*);
// 0 marks the REV1 variant this fake does not model.
constexpr unsigned kComputeSlicesByIndex[NVML_COMPUTE_INSTANCE_PROFILE_COUNT] = {1, 2, 3, 4, 7, 8, 6, 0};

FakeGpuInstance* gpuInstanceOf(nvmlGpuInstance_t handle) { return reinterpret_cast<FakeGpuInstance*>(handle); }

const FakeProfile* profileByIndex(const FakeDevice& device, unsigned index) {
  for (const auto& profile : device.profiles)
    if (profile.profileIndex == index) return &profile;
  return nullptr;
}

// The V entry points read the version word to learn which layout the caller passed.
nvmlReturn_t checkVersion(const void* info, unsigned v3, unsigned v2) {
  if (!info) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned version = 0;
  std::memcpy(&version, info, sizeof version);
  return (version == v3 || version == v2) ? NVML_SUCCESS : NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
}

template <typename Info>
void copyName(Info& info, const std::string& name) {
  std::strncpy(info.name, name.c_str(), sizeof info.name - 1);
}

// v2 and v3 name their common fields alike; v3 drops isP2pSupported, adds capabilities.
template <typename Info>
void fillProfileInfo(Info& info, unsigned version, const FakeProfile& p) {
  info = Info{};
  info.version = version;
  info.id = p.id;
  info.sliceCount = p.sliceCount;
  info.instanceCount = p.instanceCount;
  info.multiprocessorCount = p.multiprocessorCount;
  info.copyEngineCount = p.copyEngineCount;
  info.memorySizeMB = p.memorySizeMB;
  copyName(info, p.name);
}

}  // namespace

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* currentMode, unsigned int* pendingMode) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  if (!currentMode || !pendingMode) return NVML_ERROR_INVALID_ARGUMENT;
  if (!d || !d->migMode) return NVML_ERROR_NOT_SUPPORTED;
  *currentMode = d->migMode->first;
  *pendingMode = d->migMode->second;
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
                                                                nvmlGpuInstanceProfileInfo_v2_t* info) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  if (nvmlReturn_t code = checkVersion(info, kNvmlGpuInstanceProfileInfoV3, kNvmlGpuInstanceProfileInfoV2); code != NVML_SUCCESS)
    return code;
  if (!d || !d->migMode) return NVML_ERROR_NOT_SUPPORTED;
  if (profile >= NVML_GPU_INSTANCE_PROFILE_COUNT) return NVML_ERROR_INVALID_ARGUMENT;
  const FakeProfile* p = profileByIndex(*d, profile);
  if (!p) return NVML_ERROR_NOT_SUPPORTED;
  if (info->version == kNvmlGpuInstanceProfileInfoV3)
    fillProfileInfo(*reinterpret_cast<nvmlGpuInstanceProfileInfo_v3_t*>(info), kNvmlGpuInstanceProfileInfoV3, *p);
  else
    fillProfileInfo(*info, kNvmlGpuInstanceProfileInfoV2, *p);
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device, unsigned int profileId,
                                                                         nvmlGpuInstancePlacement_t* placements, unsigned int* count) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  if (!d || !d->migMode) return NVML_ERROR_NOT_SUPPORTED;
  if (!d->placementsAllowed) return NVML_ERROR_NO_PERMISSION;
  const FakeProfile* p = d->profileById(profileId);
  if (!p) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned available = static_cast<unsigned>(p->placements.size());
  if (!placements) {
    *count = available;
    return NVML_SUCCESS;
  }
  if (*count < available) return NVML_ERROR_INSUFFICIENT_SIZE;
  for (unsigned i = 0; i < available; ++i) placements[i] = {p->placements[i].start, p->placements[i].size};
  *count = available;
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t* gpuInstances,
                                                     unsigned int* count) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  if (!count || !gpuInstances) return NVML_ERROR_INVALID_ARGUMENT;
  if (!d || !d->migMode) return NVML_ERROR_NOT_SUPPORTED;
  if (d->migMode->first != NVML_DEVICE_MIG_ENABLE) return NVML_ERROR_INVALID_STATE;
  if (!d->gpuInstancesAllowed) return NVML_ERROR_NO_PERMISSION;
  unsigned found = 0;
  for (auto& gi : d->gpuInstances) {
    if (gi.profile->id != profileId) continue;
    if (found >= *count) return NVML_ERROR_INSUFFICIENT_SIZE;
    gpuInstances[found++] = reinterpret_cast<nvmlGpuInstance_t>(&gi);
  }
  *count = found;
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t* info) {
  FAKE_ENTER();
  FakeGpuInstance* gi = gpuInstanceOf(gpuInstance);
  if (!gi || !info) return NVML_ERROR_INVALID_ARGUMENT;
  info->device = toDevice(&gi->device->handle);
  info->id = gi->id;
  info->profileId = gi->profile->id;
  info->placement = {gi->placement.start, gi->placement.size};
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfoV(nvmlGpuInstance_t gpuInstance, unsigned int profile,
                                                                         unsigned int engProfile,
                                                                         nvmlComputeInstanceProfileInfo_v2_t* info) {
  FAKE_ENTER();
  FakeGpuInstance* gi = gpuInstanceOf(gpuInstance);
  if (nvmlReturn_t code = checkVersion(info, kNvmlComputeInstanceProfileInfoV3, kNvmlComputeInstanceProfileInfoV2); code != NVML_SUCCESS)
    return code;
  if (!gi || profile >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT || engProfile != NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
    return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned slices = kComputeSlicesByIndex[profile];
  const unsigned giSlices = gi->profile->sliceCount;
  if (slices == 0 || slices > giSlices) return NVML_ERROR_NOT_SUPPORTED;
  // Both layouts share every field up to the name; v3 only appends capabilities.
  const unsigned version = info->version;
  auto* v3 = reinterpret_cast<nvmlComputeInstanceProfileInfo_v3_t*>(info);
  if (version == kNvmlComputeInstanceProfileInfoV3)
    *v3 = nvmlComputeInstanceProfileInfo_v3_t{};
  else
    *info = nvmlComputeInstanceProfileInfo_v2_t{};
  info->version = version;
  info->id = profile;
  info->sliceCount = slices;
  info->instanceCount = giSlices / slices;
  info->multiprocessorCount = gi->profile->multiprocessorCount * slices / giSlices;
  info->sharedCopyEngineCount = gi->profile->copyEngineCount;
  std::string name = std::to_string(slices) + "c." + std::to_string(giSlices) + "g";
  copyName(*info, name);
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gpuInstance, unsigned int profileId,
                                                              nvmlComputeInstance_t* computeInstances, unsigned int* count) {
  FAKE_ENTER();
  FakeGpuInstance* gi = gpuInstanceOf(gpuInstance);
  if (!gi || !count || !computeInstances || profileId >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned found = 0;
  for (auto& ci : gi->computeInstances) {
    if (ci.sliceCount != kComputeSlicesByIndex[profileId]) continue;
    if (found >= *count) return NVML_ERROR_INSUFFICIENT_SIZE;
    computeInstances[found++] = reinterpret_cast<nvmlComputeInstance_t>(&ci);
  }
  *count = found;
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t* info) {
  FAKE_ENTER();
  auto* ci = reinterpret_cast<FakeComputeInstance*>(computeInstance);
  if (!ci || !info) return NVML_ERROR_INVALID_ARGUMENT;
  info->device = toDevice(&ci->gpuInstance->device->handle);
  info->gpuInstance = reinterpret_cast<nvmlGpuInstance_t>(ci->gpuInstance);
  info->id = ci->id;
  const unsigned* slot = std::find(std::begin(kComputeSlicesByIndex), std::end(kComputeSlicesByIndex), ci->sliceCount);
  info->profileId = static_cast<unsigned>(slot - std::begin(kComputeSlicesByIndex));
  info->placement = {0, ci->sliceCount};
  return NVML_SUCCESS;
}
