#include "nvml-library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>
#include <utility>

#include "nvml-return.h"

namespace topod::nvml {

namespace {

// How many times one acquire/reload re-runs init after a session-lost code
// before giving up (a driver mid-upgrade settles within a couple of tries).
constexpr int kInitAttempts = 3;

// Newest versioned name first: nvml.h maps nvmlInit to nvmlInit_v2 and so on,
// and old drivers only export the unversioned symbol.
template <typename Fn>
void resolve(void* handle, Fn& slot, std::initializer_list<const char*> names) {
  slot = nullptr;
  for (const char* name : names) {
    if (void* symbol = dlsym(handle, name)) {
      slot = reinterpret_cast<Fn>(symbol);
      return;
    }
  }
}

}  // namespace

std::string defaultLibraryPath() {
  const char* env = std::getenv("TOPOD_NVML_LIB");
  return (env && *env) ? env : "libnvidia-ml.so.1";
}

Library& Library::instance() {
  static Library library;
  return library;
}

Outcome Library::acquire(const std::string& requestedPath) {
  const std::string wanted = requestedPath.empty() ? defaultLibraryPath() : requestedPath;
  if (refs_.load() > 0 && wanted != path_) {
    // One libnvidia-ml per process: a second path while sessions are open
    // would silently read the first library.
    return Outcome::failure("TOPOD_NVML_LIBRARY_CONFLICT", "dlopen",
                            "NVML is already open from " + path_ + "; close those sessions before loading " + wanted);
  }
  if (refs_.load() > 0) {
    // A reload that failed earlier leaves references but no library: try again.
    if (!loaded_.load()) {
      Outcome outcome = loadAndInit();
      if (!outcome.ok) return outcome;
    }
    refs_.fetch_add(1);
    return Outcome::success();
  }
  path_ = wanted;
  Outcome outcome = loadAndInit();
  if (outcome.ok) refs_.store(1);
  return outcome;
}

void Library::release() {
  if (refs_.load() <= 0) return;
  if (refs_.fetch_sub(1) == 1 && loaded_.load()) {
    api_.shutdown();
    unload();
  }
}

Outcome Library::reload() {
  if (loaded_.load() && api_.shutdown) api_.shutdown();
  unload();
  reinits_.fetch_add(1);
  return loadAndInit();
}

Outcome Library::loadAndInit() {
  Outcome outcome;
  for (int attempt = 0; attempt < kInitAttempts; ++attempt) {
    if (attempt > 0) reinits_.fetch_add(1);
    outcome = load();
    if (!outcome.ok) return outcome;
    nvmlReturn_t code = api_.init();
    if (code == NVML_SUCCESS) {
      loads_.fetch_add(1);
      return Outcome::success();
    }
    unload();
    outcome = Outcome::failure(returnFullName(code), "init", "nvmlInit failed: " + returnFullName(code));
    if (!isSessionLost(code) || code == NVML_ERROR_DRIVER_NOT_LOADED) return outcome;
  }
  return outcome;
}

Outcome Library::load() {
  dlerror();
  handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* why = dlerror();
    return Outcome::failure("TOPOD_NVML_LIBRARY_NOT_FOUND", "dlopen", "cannot load " + path_ + ": " + (why ? why : "unknown dlopen error"));
  }
  loaded_.store(true);
  return resolveSymbols();
}

void Library::unload() {
  if (handle_) dlclose(handle_);
  handle_ = nullptr;
  api_ = Api{};
  loaded_.store(false);
}

Outcome Library::resolveSymbols() {
  void* h = handle_;
  resolve(h, api_.init, {"nvmlInit_v2", "nvmlInit"});
  resolve(h, api_.shutdown, {"nvmlShutdown"});
  resolve(h, api_.systemGetDriverVersion, {"nvmlSystemGetDriverVersion"});
  resolve(h, api_.systemGetCudaDriverVersion, {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});
  resolve(h, api_.deviceGetCount, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  resolve(h, api_.deviceGetHandleByIndex, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  resolve(h, api_.deviceGetUUID, {"nvmlDeviceGetUUID"});
  resolve(h, api_.deviceGetName, {"nvmlDeviceGetName"});
  resolve(h, api_.deviceGetSerial, {"nvmlDeviceGetSerial"});
  resolve(h, api_.deviceGetPciInfo, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"});
  resolve(h, api_.deviceGetArchitecture, {"nvmlDeviceGetArchitecture"});
  resolve(h, api_.deviceGetMemoryInfo, {"nvmlDeviceGetMemoryInfo"});
  resolve(h, api_.deviceGetMemoryInfoV2, {"nvmlDeviceGetMemoryInfo_v2"});
  resolve(h, api_.deviceGetBAR1MemoryInfo, {"nvmlDeviceGetBAR1MemoryInfo"});
  resolve(h, api_.deviceGetMaxClockInfo, {"nvmlDeviceGetMaxClockInfo"});
  resolve(h, api_.deviceGetMemoryBusWidth, {"nvmlDeviceGetMemoryBusWidth"});
  resolve(h, api_.deviceGetCurrPcieLinkGeneration, {"nvmlDeviceGetCurrPcieLinkGeneration"});
  resolve(h, api_.deviceGetMaxPcieLinkGeneration, {"nvmlDeviceGetMaxPcieLinkGeneration"});
  resolve(h, api_.deviceGetCurrPcieLinkWidth, {"nvmlDeviceGetCurrPcieLinkWidth"});
  resolve(h, api_.deviceGetMaxPcieLinkWidth, {"nvmlDeviceGetMaxPcieLinkWidth"});
  resolve(h, api_.deviceGetNumaNodeId, {"nvmlDeviceGetNumaNodeId"});
  resolve(h, api_.deviceGetCpuAffinity, {"nvmlDeviceGetCpuAffinity"});
  resolve(h, api_.deviceGetNvLinkState, {"nvmlDeviceGetNvLinkState"});
  resolve(h, api_.deviceGetNvLinkRemotePciInfo, {"nvmlDeviceGetNvLinkRemotePciInfo_v2", "nvmlDeviceGetNvLinkRemotePciInfo"});
  resolve(h, api_.deviceGetNvLinkRemoteDeviceType, {"nvmlDeviceGetNvLinkRemoteDeviceType"});
  resolve(h, api_.deviceGetTopologyCommonAncestor, {"nvmlDeviceGetTopologyCommonAncestor"});
  resolve(h, api_.deviceGetP2PStatus, {"nvmlDeviceGetP2PStatus"});
  resolve(h, api_.deviceGetMigMode, {"nvmlDeviceGetMigMode"});
  resolve(h, api_.deviceGetGpuInstanceProfileInfo, {"nvmlDeviceGetGpuInstanceProfileInfo"});
  resolve(h, api_.deviceGetGpuInstanceProfileInfoV, {"nvmlDeviceGetGpuInstanceProfileInfoV"});
  resolve(h, api_.deviceGetGpuInstancePossiblePlacements,
          {"nvmlDeviceGetGpuInstancePossiblePlacements_v2", "nvmlDeviceGetGpuInstancePossiblePlacements"});
  resolve(h, api_.deviceGetGpuInstances, {"nvmlDeviceGetGpuInstances"});
  resolve(h, api_.gpuInstanceGetInfo, {"nvmlGpuInstanceGetInfo"});
  resolve(h, api_.gpuInstanceGetComputeInstanceProfileInfo, {"nvmlGpuInstanceGetComputeInstanceProfileInfo"});
  resolve(h, api_.gpuInstanceGetComputeInstanceProfileInfoV, {"nvmlGpuInstanceGetComputeInstanceProfileInfoV"});
  resolve(h, api_.gpuInstanceGetComputeInstances, {"nvmlGpuInstanceGetComputeInstances"});
  resolve(h, api_.computeInstanceGetInfo, {"nvmlComputeInstanceGetInfo_v2", "nvmlComputeInstanceGetInfo"});
  resolve(h, api_.deviceGetMaxMigDeviceCount, {"nvmlDeviceGetMaxMigDeviceCount"});
  resolve(h, api_.deviceGetMigDeviceHandleByIndex, {"nvmlDeviceGetMigDeviceHandleByIndex"});
  resolve(h, api_.deviceGetGpuInstanceId, {"nvmlDeviceGetGpuInstanceId"});
  resolve(h, api_.deviceGetComputeInstanceId, {"nvmlDeviceGetComputeInstanceId"});
  resolve(h, api_.deviceGetAttributes, {"nvmlDeviceGetAttributes_v2", "nvmlDeviceGetAttributes"});
  // _v3 and _v2 fill the same nvmlProcessInfo_v2_t; the unversioned v1 call
  // (a 16-byte layout, drivers before 450) is not used.
  resolve(h, api_.deviceGetComputeRunningProcesses, {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  resolve(h, api_.deviceGetGraphicsRunningProcesses,
          {"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2"});
  resolve(h, api_.deviceGetUtilizationRates, {"nvmlDeviceGetUtilizationRates"});
  resolve(h, api_.deviceGetSamples, {"nvmlDeviceGetSamples"});
  resolve(h, api_.deviceGetTemperature, {"nvmlDeviceGetTemperature"});
  resolve(h, api_.deviceGetPowerUsage, {"nvmlDeviceGetPowerUsage"});
  resolve(h, api_.deviceGetClockInfo, {"nvmlDeviceGetClockInfo"});
  // Renamed in driver 535 (CUDA 12.2); the old name stays exported as an alias.
  resolve(h, api_.deviceGetCurrentClocksEventReasons,
          {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  resolve(h, api_.deviceGetPersistenceMode, {"nvmlDeviceGetPersistenceMode"});
  resolve(h, api_.deviceGetEccMode, {"nvmlDeviceGetEccMode"});

  // Without these four there is nothing to read; everything else degrades one field.
  for (auto [fn, name] : {std::pair<const void*, const char*>{reinterpret_cast<const void*>(api_.init), "nvmlInit"},
                          {reinterpret_cast<const void*>(api_.shutdown), "nvmlShutdown"},
                          {reinterpret_cast<const void*>(api_.deviceGetCount), "nvmlDeviceGetCount"},
                          {reinterpret_cast<const void*>(api_.deviceGetHandleByIndex), "nvmlDeviceGetHandleByIndex"}}) {
    if (!fn) {
      std::string missing = name;
      unload();
      return Outcome::failure("TOPOD_NVML_SYMBOL_NOT_FOUND", "symbols", path_ + " does not export " + missing);
    }
  }
  return Outcome::success();
}

}  // namespace topod::nvml
