#include "mig-reader.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "field-log.h"

namespace topod::nvml {

namespace {

// Profile indices grow with each driver (17 GPU-instance and 8 compute-instance
// indices in the 580 headers). Probing past the counts we know finds the
// profiles newer drivers add, at the price of a few cheap refusals.
constexpr unsigned kGpuProfileIndexLimit = 32;
constexpr unsigned kComputeProfileIndexLimit = 16;

// The v1/v2/v3 profile structs name their shared fields alike.
template <typename Info>
GpuInstanceProfile gpuProfileFrom(unsigned index, const Info& info, std::string name) {
  return {index,
          info.id,
          std::move(name),
          info.sliceCount,
          info.instanceCount,
          info.multiprocessorCount,
          info.copyEngineCount,
          info.memorySizeMB,
          std::nullopt};
}

bool versionRejected(nvmlReturn_t code) { return code == NVML_ERROR_ARGUMENT_VERSION_MISMATCH || code == NVML_ERROR_FUNCTION_NOT_FOUND; }

// The V call takes a v2 pointer but reads the version word first, so the v3
// layout (same size) goes through the same entry point. Drivers before 545
// answer ARGUMENT_VERSION_MISMATCH to v3; pre-v2 drivers only have the v1 call.
nvmlReturn_t queryGpuInstanceProfile(const Api& api, nvmlDevice_t device, unsigned index, GpuInstanceProfile& out) {
  nvmlGpuInstanceProfileInfo_v3_t v3{};
  v3.version = kNvmlGpuInstanceProfileInfoV3;
  nvmlReturn_t code = invoke(api.deviceGetGpuInstanceProfileInfoV, device, index, reinterpret_cast<nvmlGpuInstanceProfileInfo_v2_t*>(&v3));
  if (code == NVML_SUCCESS) {
    out = gpuProfileFrom(index, v3, fromBuffer(v3.name, sizeof v3.name));
    return code;
  }
  if (!versionRejected(code)) return code;
  nvmlGpuInstanceProfileInfo_v2_t v2{};
  v2.version = kNvmlGpuInstanceProfileInfoV2;
  code = invoke(api.deviceGetGpuInstanceProfileInfoV, device, index, &v2);
  if (code == NVML_SUCCESS) {
    out = gpuProfileFrom(index, v2, fromBuffer(v2.name, sizeof v2.name));
    return code;
  }
  if (!versionRejected(code)) return code;
  nvmlGpuInstanceProfileInfo_t v1{};
  code = invoke(api.deviceGetGpuInstanceProfileInfo, device, index, &v1);
  if (code == NVML_SUCCESS) out = gpuProfileFrom(index, v1, "");
  return code;
}

template <typename Info>
ComputeProfile computeProfileFrom(const Info& info) {
  return {info.id, info.sliceCount, info.instanceCount, info.multiprocessorCount};
}

nvmlReturn_t queryComputeInstanceProfile(const Api& api, nvmlGpuInstance_t gi, unsigned index, ComputeProfile& out) {
  nvmlComputeInstanceProfileInfo_v3_t v3{};
  v3.version = kNvmlComputeInstanceProfileInfoV3;
  nvmlReturn_t code =
      invoke(api.gpuInstanceGetComputeInstanceProfileInfoV, gi, index, unsigned{NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED},
             reinterpret_cast<nvmlComputeInstanceProfileInfo_v2_t*>(&v3));
  if (code == NVML_SUCCESS) {
    out = computeProfileFrom(v3);
    return code;
  }
  if (!versionRejected(code)) return code;
  nvmlComputeInstanceProfileInfo_v2_t v2{};
  v2.version = kNvmlComputeInstanceProfileInfoV2;
  code = invoke(api.gpuInstanceGetComputeInstanceProfileInfoV, gi, index, unsigned{NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED}, &v2);
  if (code == NVML_SUCCESS) {
    out = computeProfileFrom(v2);
    return code;
  }
  if (!versionRejected(code)) return code;
  nvmlComputeInstanceProfileInfo_t v1{};
  code = invoke(api.gpuInstanceGetComputeInstanceProfileInfo, gi, index, unsigned{NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED}, &v1);
  if (code == NVML_SUCCESS) out = computeProfileFrom(v1);
  return code;
}

// Possible placements need no MIG mode, but inside containers and for
// unprivileged users the driver may refuse them (NO_PERMISSION); the MIG view
// then derives L2 shares from memory ratios instead.
Opt<std::vector<Placement>> readPlacements(const Api& api, FieldLog& log, nvmlDevice_t device, const GpuInstanceProfile& profile) {
  unsigned count = 0;
  nvmlReturn_t code =
      invoke(api.deviceGetGpuInstancePossiblePlacements, device, profile.id, static_cast<nvmlGpuInstancePlacement_t*>(nullptr), &count);
  // Drivers that do not answer the size query get a buffer of instanceCount,
  // which the reference guarantees is enough.
  if (code != NVML_SUCCESS) count = std::max(profile.instanceCount, 1U);
  std::vector<nvmlGpuInstancePlacement_t> raw(std::max(count, 1U));
  count = static_cast<unsigned>(raw.size());
  if (!log.check(invoke(api.deviceGetGpuInstancePossiblePlacements, device, profile.id, raw.data(), &count), "placements"))
    return std::nullopt;
  std::vector<Placement> placements;
  for (unsigned i = 0; i < count && i < raw.size(); ++i) placements.push_back({raw[i].start, raw[i].size});
  return placements;
}

// Profile tables are probed index by index. NOT_SUPPORTED is an index this GPU
// lacks and INVALID_ARGUMENT one this driver does not know; neither is a
// refusal, and neither ends the scan: the tables have holes (no 6- or 8-slice
// profiles on A100/H100, GFX variants only on Blackwell).
template <typename Profile, typename Query, typename Use>
void forEachProfile(FieldLog& log, const char* field, unsigned limit, Query query, Use use) {
  for (unsigned index = 0; index < limit; ++index) {
    Profile profile;
    nvmlReturn_t code = query(index, profile);
    if (code == NVML_ERROR_INVALID_ARGUMENT || code == NVML_ERROR_NOT_SUPPORTED) continue;
    if (log.check(code, field)) use(profile);
  }
}

// What a GPU instance of this profile offers; the same for every instance of
// it, so asked once per profile and cached while the table is (about 16
// refused or answered queries per instance otherwise).
const ComputeProfileTable& computeProfilesOf(const Api& api, nvmlGpuInstance_t gi, unsigned gpuProfileId,
                                             std::map<unsigned, ComputeProfileTable>& tables, ComputeProfileTable& uncached) {
  if (auto found = tables.find(gpuProfileId); found != tables.end()) return found->second;
  ComputeProfileTable table;
  FieldLog log(table.degraded);
  forEachProfile<ComputeProfile>(
      log, "computeInstanceProfiles", kComputeProfileIndexLimit,
      [&](unsigned index, ComputeProfile& profile) { return queryComputeInstanceProfile(api, gi, index, profile); },
      [&](const ComputeProfile& profile) { table.profiles.push_back(profile); });
  if (log.sawTransient()) return uncached = std::move(table);
  return tables[gpuProfileId] = std::move(table);
}

std::vector<ComputeInstance> readComputeInstances(const Api& api, FieldLog& log, nvmlGpuInstance_t gi, const ComputeProfileTable& table) {
  std::vector<ComputeInstance> out;
  log.replay(table.degraded);
  for (const ComputeProfile& profile : table.profiles) {
    std::vector<nvmlComputeInstance_t> handles(std::max(profile.instanceCount, 1U));
    unsigned count = static_cast<unsigned>(handles.size());
    if (!log.check(invoke(api.gpuInstanceGetComputeInstances, gi, profile.id, handles.data(), &count), "computeInstances")) continue;
    for (unsigned i = 0; i < count && i < handles.size(); ++i) {
      nvmlComputeInstanceInfo_t info{};
      if (!log.check(invoke(api.computeInstanceGetInfo, handles[i], &info), "computeInstanceInfo")) continue;
      out.push_back({info.id, info.profileId, profile.multiprocessorCount, profile.sliceCount});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

// Listing GPU instances is a privileged operation (root, or access to the
// mig/config capability); unprivileged readers still see the MIG devices below.
Opt<std::vector<GpuInstance>> readGpuInstances(const Api& api, FieldLog& log, nvmlDevice_t device,
                                               const std::vector<GpuInstanceProfile>& profiles,
                                               std::map<unsigned, ComputeProfileTable>& computeProfiles) {
  std::vector<GpuInstance> out;
  for (const auto& profile : profiles) {
    std::vector<nvmlGpuInstance_t> handles(std::max(profile.instanceCount, 1U));
    unsigned count = static_cast<unsigned>(handles.size());
    if (!log.check(invoke(api.deviceGetGpuInstances, device, profile.id, handles.data(), &count), "gpuInstances")) return std::nullopt;
    for (unsigned i = 0; i < count && i < handles.size(); ++i) {
      nvmlGpuInstanceInfo_t info{};
      if (!log.check(invoke(api.gpuInstanceGetInfo, handles[i], &info), "gpuInstanceInfo")) continue;
      GpuInstance instance;
      instance.id = info.id;
      instance.profileId = info.profileId;
      instance.placement = Placement{info.placement.start, info.placement.size};
      ComputeProfileTable uncached;
      const ComputeProfileTable& table = computeProfilesOf(api, handles[i], profile.id, computeProfiles, uncached);
      instance.computeInstances = readComputeInstances(api, log, handles[i], table);
      out.push_back(std::move(instance));
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

// MIG device handles answer only a subset of device queries: UUID, the
// instance ids and attributes work; clocks, PCIe and the like are
// NOT_SUPPORTED there, so nothing else is asked.
std::vector<MigDevice> readMigDevices(const Api& api, FieldLog& log, nvmlDevice_t device) {
  std::vector<MigDevice> out;
  forEachMigDevice(api, log, device, [&](unsigned index, nvmlDevice_t mig) {
    MigDevice entry;
    entry.index = index;
    FieldLog migLog(entry.degraded);
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (migLog.check(invoke(api.deviceGetUUID, mig, uuid, unsigned{sizeof uuid}), "uuid")) entry.uuid = fromBuffer(uuid, sizeof uuid);
    unsigned id = 0;
    if (migLog.check(invoke(api.deviceGetGpuInstanceId, mig, &id), "gpuInstanceId")) entry.gpuInstanceId = id;
    if (migLog.check(invoke(api.deviceGetComputeInstanceId, mig, &id), "computeInstanceId")) entry.computeInstanceId = id;
    nvmlDeviceAttributes_t attributes{};
    if (migLog.check(invoke(api.deviceGetAttributes, mig, &attributes), "attributes")) {
      entry.multiprocessorCount = attributes.multiprocessorCount;
      entry.memorySizeMB = attributes.memorySizeMB;
      entry.gpuInstanceSliceCount = attributes.gpuInstanceSliceCount;
      entry.computeInstanceSliceCount = attributes.computeInstanceSliceCount;
      entry.sharedCopyEngineCount = attributes.sharedCopyEngineCount;
    }
    out.push_back(std::move(entry));
  });
  return out;
}

}  // namespace

std::vector<GpuInstanceProfile> readMigProfiles(const Api& api, FieldLog& log, nvmlDevice_t device) {
  std::vector<GpuInstanceProfile> profiles;
  forEachProfile<GpuInstanceProfile>(
      log, "profiles", kGpuProfileIndexLimit,
      [&](unsigned index, GpuInstanceProfile& profile) { return queryGpuInstanceProfile(api, device, index, profile); },
      [&](GpuInstanceProfile& profile) {
        profile.placements = readPlacements(api, log, device, profile);
        profiles.push_back(std::move(profile));
      });
  return profiles;
}

void readMigInstances(const Api& api, FieldLog& log, nvmlDevice_t device, nvmlReturn_t modeCode,
                      std::map<unsigned, ComputeProfileTable>& computeProfiles, DeviceState& out) {
  // A GPU that cannot do MIG answers NOT_SUPPORTED: no instances, and that is an answer.
  if (modeCode != NVML_SUCCESS) {
    if (modeCode == NVML_ERROR_NOT_SUPPORTED) out.gpuInstances = std::vector<GpuInstance>{};
    return;
  }
  if (out.migModeCurrent != NVML_DEVICE_MIG_ENABLE) {
    out.gpuInstances = std::vector<GpuInstance>{};
    return;
  }
  out.gpuInstances = readGpuInstances(api, log, device, out.profiles, computeProfiles);
  out.migDevices = readMigDevices(api, log, device);
}

}  // namespace topod::nvml
