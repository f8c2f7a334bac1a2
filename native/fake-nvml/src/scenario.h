// The fake NVML's world: one scenario parsed from the JSON file named by
// TOPOD_FAKE_NVML_SCENARIO, re-read whenever the file changes, plus the
// injected failures (init failure, pending LIB_RM_VERSION_MISMATCH calls,
// per-function return codes).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nvml-subset.h"

namespace topod::fake {

template <typename T>
using Opt = std::optional<T>;

struct FakeDevice;
struct FakeGpuInstance;
struct FakeComputeInstance;

/** What an nvmlDevice_t points at: a physical GPU or one MIG device. */
struct FakeHandle {
  FakeDevice* device = nullptr;
  FakeComputeInstance* mig = nullptr;  // null for the physical GPU
};

struct FakePlacement {
  unsigned start = 0;
  unsigned size = 0;
};

struct FakeProfile {
  unsigned profileIndex = 0;
  unsigned id = 0;
  std::string name;
  unsigned sliceCount = 0;
  unsigned instanceCount = 0;
  unsigned multiprocessorCount = 0;
  unsigned copyEngineCount = 0;
  unsigned long long memorySizeMB = 0;
  std::vector<FakePlacement> placements;
};

/** A process on a GPU or a MIG device, as the running-process lists report it. */
struct FakeProcess {
  unsigned pid = 0;
  /** nullopt: NVML_VALUE_NOT_AVAILABLE (the driver cannot attribute memory). */
  Opt<unsigned long long> usedMemoryBytes;
  bool compute = true;
  bool graphics = false;
};

/**
 * How the GPU runs now. Absent scenario keys default to an idle GPU (see
 * activity-scenario.cc); a key set to null makes its query answer NOT_SUPPORTED.
 */
struct FakeActivity {
  std::vector<FakeProcess> processes;
  Opt<std::pair<unsigned, unsigned>> utilizationPercent;  // gpu, memory
  /** GPU-utilization samples, oldest first, the newest taken "now"; nullopt: NOT_SUPPORTED. */
  Opt<std::vector<double>> utilizationSamples;
  unsigned samplePeriodMicros = 166667;
  Opt<unsigned> temperatureC, powerMilliwatts, smClockMHz, memoryClockMHz;
  Opt<unsigned long long> clocksEventReasons;
  Opt<bool> persistenceMode;
  Opt<std::pair<bool, bool>> eccMode;  // current, pending
};

struct FakeComputeInstance {
  unsigned id = 0;
  std::vector<FakeProcess> processes;
  unsigned sliceCount = 0;
  unsigned multiprocessorCount = 0;
  std::string migDeviceUuid;
  FakeGpuInstance* gpuInstance = nullptr;
  FakeHandle handle;
};

struct FakeGpuInstance {
  unsigned id = 0;
  const FakeProfile* profile = nullptr;
  FakePlacement placement;
  std::vector<FakeComputeInstance> computeInstances;
  FakeDevice* device = nullptr;
};

struct FakeDevice {
  FakeHandle handle;
  Opt<std::string> uuid, name, serial, pciBusId;
  Opt<unsigned> architecture;
  Opt<unsigned long long> memoryTotalBytes, memoryUsedBytes, memoryReservedBytes, bar1TotalBytes, bar1UsedBytes;
  Opt<unsigned> maxSmClockMHz, maxMemoryClockMHz, memoryBusWidthBits;
  Opt<unsigned> pcieCurrentGen, pcieMaxGen, pcieCurrentWidth, pcieMaxWidth, numaNode;
  Opt<std::vector<unsigned>> cpuAffinity;
  std::vector<std::pair<unsigned, std::string>> nvlinks;  // links up, with the remote bus id
  /** By link: nvmlIntNvLinkDeviceType_t given in the scenario (default: a GPU when the bus id is one, else a switch). */
  std::map<unsigned, unsigned> nvlinkRemoteTypes;
  Opt<std::pair<unsigned, unsigned>> migMode;  // current, pending
  std::vector<FakeProfile> profiles;
  std::vector<FakeGpuInstance> gpuInstances;
  FakeActivity activity;
  bool placementsAllowed = true;
  bool gpuInstancesAllowed = true;

  const FakeProfile* profileById(unsigned id) const;
  /** MIG devices in NVML order: by GPU instance, then compute instance. */
  std::vector<FakeComputeInstance*> migDevices();
};

/** How two GPUs of the scenario connect (top-level "links"); pairs not listed answer NOT_SUPPORTED. */
struct FakeDevicePair {
  unsigned a = 0;
  unsigned b = 0;
  Opt<unsigned> commonAncestor;      // nvmlGpuTopologyLevel_t
  std::map<unsigned, unsigned> p2p;  // nvmlGpuP2PCapsIndex_t → nvmlGpuP2PStatus_t; absent: NOT_SUPPORTED
};

struct Scenario {
  std::string driverVersion;
  Opt<int> cudaDriverVersion;
  std::vector<FakeDevice> devices;
  std::vector<FakeDevicePair> links;
  /** The pair of devices a and b (either order), or nullptr. */
  const FakeDevicePair* pair(unsigned a, unsigned b) const;
  nvmlReturn_t initFailure = NVML_SUCCESS;
  unsigned rmVersionMismatch = 0;
  std::map<std::string, nvmlReturn_t> callFailures;
  /** Sleep in every call: a slow driver, to show reads stay off the event loop. */
  unsigned callDelayMicros = 0;
  /** File every entry point appends its name to, one a line ("" = none): tests count NVML calls. */
  std::string callLog;
};

/** Parses and links a scenario (throws std::runtime_error with the reason). */
std::unique_ptr<Scenario> parseScenario(const std::string& text);

/**
 * Entry check for every exported call: refreshes the scenario when its file
 * changed, consumes one pending version mismatch, enforces init, applies
 * per-function failures. SUCCESS means "go on and answer".
 */
nvmlReturn_t enter(const char* function, bool requiresInit = true);
/** The scenario in force (never freed: handles into older ones stay valid). */
Scenario* current();
/** nvmlInit / nvmlShutdown bookkeeping (NVML counts references too). */
nvmlReturn_t initialize();
nvmlReturn_t shutdown();

}  // namespace topod::fake
