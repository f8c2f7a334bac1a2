// libnvidia-ml.so.1 loaded at run time: symbol table, reference-counted
// init/shutdown, and the full reload used after a driver upgrade or reload.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "nvml-subset.h"

namespace topod::nvml {

/** Every entry point the readers use; null when this libnvidia-ml lacks it. */
struct Api {
  nvmlInit_fn init = nullptr;
  nvmlShutdown_fn shutdown = nullptr;
  nvmlSystemGetDriverVersion_fn systemGetDriverVersion = nullptr;
  nvmlSystemGetCudaDriverVersion_fn systemGetCudaDriverVersion = nullptr;
  nvmlDeviceGetCount_fn deviceGetCount = nullptr;
  nvmlDeviceGetHandleByIndex_fn deviceGetHandleByIndex = nullptr;
  nvmlDeviceGetString_fn deviceGetUUID = nullptr;
  nvmlDeviceGetString_fn deviceGetName = nullptr;
  nvmlDeviceGetString_fn deviceGetSerial = nullptr;
  nvmlDeviceGetPciInfo_fn deviceGetPciInfo = nullptr;
  nvmlDeviceGetUint_fn deviceGetArchitecture = nullptr;
  nvmlDeviceGetMemoryInfo_fn deviceGetMemoryInfo = nullptr;
  nvmlDeviceGetMemoryInfoV2_fn deviceGetMemoryInfoV2 = nullptr;
  nvmlDeviceGetBAR1MemoryInfo_fn deviceGetBAR1MemoryInfo = nullptr;
  nvmlDeviceGetMaxClockInfo_fn deviceGetMaxClockInfo = nullptr;
  nvmlDeviceGetUint_fn deviceGetMemoryBusWidth = nullptr;
  nvmlDeviceGetUint_fn deviceGetCurrPcieLinkGeneration = nullptr;
  nvmlDeviceGetUint_fn deviceGetMaxPcieLinkGeneration = nullptr;
  nvmlDeviceGetUint_fn deviceGetCurrPcieLinkWidth = nullptr;
  nvmlDeviceGetUint_fn deviceGetMaxPcieLinkWidth = nullptr;
  nvmlDeviceGetUint_fn deviceGetNumaNodeId = nullptr;
  nvmlDeviceGetCpuAffinity_fn deviceGetCpuAffinity = nullptr;
  nvmlDeviceGetNvLinkState_fn deviceGetNvLinkState = nullptr;
  nvmlDeviceGetNvLinkRemotePciInfo_fn deviceGetNvLinkRemotePciInfo = nullptr;
  nvmlDeviceGetNvLinkRemoteDeviceType_fn deviceGetNvLinkRemoteDeviceType = nullptr;
  nvmlDeviceGetTopologyCommonAncestor_fn deviceGetTopologyCommonAncestor = nullptr;
  nvmlDeviceGetP2PStatus_fn deviceGetP2PStatus = nullptr;
  nvmlDeviceGetMigMode_fn deviceGetMigMode = nullptr;
  nvmlDeviceGetGpuInstanceProfileInfo_fn deviceGetGpuInstanceProfileInfo = nullptr;
  nvmlDeviceGetGpuInstanceProfileInfoV_fn deviceGetGpuInstanceProfileInfoV = nullptr;
  nvmlDeviceGetGpuInstancePossiblePlacements_fn deviceGetGpuInstancePossiblePlacements = nullptr;
  nvmlDeviceGetGpuInstances_fn deviceGetGpuInstances = nullptr;
  nvmlGpuInstanceGetInfo_fn gpuInstanceGetInfo = nullptr;
  nvmlGpuInstanceGetComputeInstanceProfileInfo_fn gpuInstanceGetComputeInstanceProfileInfo = nullptr;
  nvmlGpuInstanceGetComputeInstanceProfileInfoV_fn gpuInstanceGetComputeInstanceProfileInfoV = nullptr;
  nvmlGpuInstanceGetComputeInstances_fn gpuInstanceGetComputeInstances = nullptr;
  nvmlComputeInstanceGetInfo_fn computeInstanceGetInfo = nullptr;
  nvmlDeviceGetUint_fn deviceGetMaxMigDeviceCount = nullptr;
  nvmlDeviceGetMigDeviceHandleByIndex_fn deviceGetMigDeviceHandleByIndex = nullptr;
  nvmlDeviceGetUint_fn deviceGetGpuInstanceId = nullptr;
  nvmlDeviceGetUint_fn deviceGetComputeInstanceId = nullptr;
  nvmlDeviceGetAttributes_fn deviceGetAttributes = nullptr;
  // Activity (activity-reader.h): who uses the GPU and how it runs now.
  nvmlDeviceGetRunningProcesses_fn deviceGetComputeRunningProcesses = nullptr;
  nvmlDeviceGetRunningProcesses_fn deviceGetGraphicsRunningProcesses = nullptr;
  nvmlDeviceGetUtilizationRates_fn deviceGetUtilizationRates = nullptr;
  nvmlDeviceGetSamples_fn deviceGetSamples = nullptr;
  nvmlDeviceGetTemperature_fn deviceGetTemperature = nullptr;
  nvmlDeviceGetUint_fn deviceGetPowerUsage = nullptr;
  nvmlDeviceGetClockInfo_fn deviceGetClockInfo = nullptr;
  nvmlDeviceGetClocksEventReasons_fn deviceGetCurrentClocksEventReasons = nullptr;
  nvmlDeviceGetEnableState_fn deviceGetPersistenceMode = nullptr;
  nvmlDeviceGetEccMode_fn deviceGetEccMode = nullptr;
};

/** Why loading or initialising failed: a stable code and a human message. */
struct Outcome {
  bool ok = true;
  std::string code;   // "NVML_ERROR_DRIVER_NOT_LOADED", "TOPOD_NVML_LIBRARY_NOT_FOUND", ...
  std::string stage;  // "dlopen", "symbols", "init", "read"
  std::string message;
  static Outcome success() { return {}; }
  static Outcome failure(std::string code, std::string stage, std::string message) {
    return {false, std::move(code), std::move(stage), std::move(message)};
  }
};

/**
 * The process-wide NVML session. Callers hold mutex() for the whole of a
 * read, so a reload never pulls the library out from under another reader.
 */
class Library {
 public:
  static Library& instance();

  std::mutex& mutex() { return mutex_; }

  /** Loads and initialises on the first reference; later ones only count. */
  Outcome acquire(const std::string& requestedPath);
  /** Drops one reference; the last one shuts NVML down and unloads it. */
  void release();
  /** Shutdown, unload, load, init again, keeping the references. */
  Outcome reload();

  const Api& api() const { return api_; }
  const std::string& path() const { return path_; }

  // Readable without the mutex (cheap status for JS).
  int references() const { return refs_.load(); }
  unsigned reinitCount() const { return reinits_.load(); }
  /** Successful loads so far: changes on every (re)initialisation, when handles and cached state go stale. */
  unsigned loadCount() const { return loads_.load(); }
  bool loaded() const { return loaded_.load(); }

 private:
  Library() = default;
  Outcome loadAndInit();
  Outcome load();
  void unload();
  Outcome resolveSymbols();

  std::mutex mutex_;
  void* handle_ = nullptr;
  Api api_;
  std::string path_;
  std::atomic<int> refs_{0};
  std::atomic<unsigned> reinits_{0};
  std::atomic<unsigned> loads_{0};
  std::atomic<bool> loaded_{false};
};

/** TOPOD_NVML_LIB when set, else the soname the dynamic linker resolves. */
std::string defaultLibraryPath();

}  // namespace topod::nvml
