// The plain C++ result of one activity read of one GPU: who runs on it and
// how it runs now (processes, utilization, temperature, power, clocks and
// their event reasons, persistence and ECC). Every field NVML refuses stays
// empty and is named in `degraded`; one refusal never fails the read.
#pragma once

#include <string>
#include <vector>

#include "snapshot.h"

namespace topod::nvml {

struct ProcessEntry {
  unsigned pid = 0;
  /** nullopt when NVML cannot attribute memory to the process (NVML_VALUE_NOT_AVAILABLE). */
  Opt<unsigned long long> usedMemoryBytes;
  /** Set when MIG is on and the list came from the physical GPU. */
  Opt<unsigned> gpuInstanceId;
  Opt<unsigned> computeInstanceId;
};

/** A list is nullopt when NVML refused it (the reason is in degraded). */
struct ProcessLists {
  Opt<std::vector<ProcessEntry>> compute;
  Opt<std::vector<ProcessEntry>> graphics;
};

/** One MIG device of the GPU: only the process lists are asked (the rest is NOT_SUPPORTED on MIG handles). */
struct MigActivity {
  unsigned index = 0;
  Opt<std::string> uuid;
  ProcessLists processes;
  std::vector<std::string> degraded;
};

struct UtilizationSample {
  unsigned long long timestampMicros = 0;
  double percent = 0;
};

struct ActivityState {
  unsigned index = 0;
  Opt<std::string> uuid;
  ProcessLists processes;
  Opt<unsigned> utilizationGpuPercent;
  Opt<unsigned> utilizationMemoryPercent;
  /** Every GPU-utilization sample the driver buffers, oldest first; empty when it holds none. */
  Opt<std::vector<UtilizationSample>> utilizationSamples;
  Opt<MemoryInfo> memory;
  Opt<unsigned> temperatureC;
  Opt<unsigned> powerMilliwatts;
  Opt<unsigned> smClockMHz;
  Opt<unsigned> maxSmClockMHz;
  /** nvmlClocksEventReason* bits. */
  Opt<unsigned long long> clocksEventReasons;
  Opt<bool> persistenceMode;
  Opt<bool> eccModeCurrent;
  Opt<bool> eccModePending;
  Opt<unsigned> migModeCurrent;
  std::vector<MigActivity> migDevices;
  std::vector<std::string> degraded;
  std::string libraryPath;
  unsigned reinitCount = 0;
  double readMicros = 0;
};

}  // namespace topod::nvml
