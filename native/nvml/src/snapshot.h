// The plain C++ result of one NVML read: filled on a worker thread (no N-API
// values there), converted to JS on the main thread by to-js.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace topod::nvml {

template <typename T>
using Opt = std::optional<T>;

struct Placement {
  unsigned start = 0;
  unsigned size = 0;
};

struct GpuInstanceProfile {
  unsigned profileIndex = 0;
  unsigned id = 0;
  std::string name;
  unsigned sliceCount = 0;
  unsigned instanceCount = 0;
  unsigned multiprocessorCount = 0;
  unsigned copyEngineCount = 0;
  unsigned long long memorySizeMB = 0;
  Opt<std::vector<Placement>> placements;
};

struct ComputeInstance {
  unsigned id = 0;
  Opt<unsigned> profileId;
  Opt<unsigned> multiprocessorCount;
  Opt<unsigned> sliceCount;
};

struct GpuInstance {
  unsigned id = 0;
  unsigned profileId = 0;
  Opt<Placement> placement;
  std::vector<ComputeInstance> computeInstances;
};

/** A MIG device: the handle CUDA sees, one per compute instance. */
struct MigDevice {
  unsigned index = 0;
  Opt<std::string> uuid;
  Opt<unsigned> gpuInstanceId;
  Opt<unsigned> computeInstanceId;
  Opt<unsigned> multiprocessorCount;
  Opt<unsigned long long> memorySizeMB;
  Opt<unsigned> gpuInstanceSliceCount;
  Opt<unsigned> computeInstanceSliceCount;
  Opt<unsigned> sharedCopyEngineCount;
  std::vector<std::string> degraded;
};

struct NvLink {
  unsigned link = 0;
  Opt<std::string> remotePciBusId;
  /** nvmlIntNvLinkDeviceType_t: a GPU, an NVSwitch (HGX boards), an IBM NPU. */
  Opt<unsigned> remoteDeviceType;
};

/**
 * Two GPUs of one snapshot (a < b, by index), as `nvidia-smi topo -m` sees
 * them: the closest PCIe ancestor they share and whether peer-to-peer works
 * over PCIe and over NVLink. Each field may be refused on its own.
 */
struct DevicePair {
  unsigned a = 0;
  unsigned b = 0;
  Opt<unsigned> commonAncestor;  // nvmlGpuTopologyLevel_t
  Opt<unsigned> p2pRead;         // nvmlGpuP2PStatus_t
  Opt<unsigned> p2pWrite;
  Opt<unsigned> p2pNvlink;
  Opt<unsigned> p2pAtomics;
  std::vector<std::string> degraded;
  /** false when the pair came from the link cache. */
  bool read = true;
};

struct MemoryInfo {
  unsigned long long totalBytes = 0;
  unsigned long long usedBytes = 0;
  unsigned long long freeBytes = 0;
};

struct DeviceState {
  unsigned index = 0;
  Opt<std::string> uuid;
  Opt<std::string> name;
  Opt<std::string> serial;
  Opt<std::string> pciBusId;
  Opt<unsigned> architecture;
  Opt<MemoryInfo> memory;
  Opt<MemoryInfo> bar1;
  Opt<unsigned> maxSmClockMHz;
  Opt<unsigned> maxMemoryClockMHz;
  Opt<unsigned> memoryBusWidthBits;
  Opt<unsigned> pcieCurrentGen;
  Opt<unsigned> pcieMaxGen;
  Opt<unsigned> pcieCurrentWidth;
  Opt<unsigned> pcieMaxWidth;
  Opt<unsigned> numaNode;
  Opt<std::string> cpuAffinity;  // cpulist, "0-15,32-47"
  std::vector<NvLink> nvlinks;
  Opt<unsigned> migModeCurrent;
  Opt<unsigned> migModePending;
  std::vector<GpuInstanceProfile> profiles;
  Opt<std::vector<GpuInstance>> gpuInstances;  // empty = none; nullopt = not readable
  std::vector<MigDevice> migDevices;
  std::vector<std::string> degraded;  // "placements: NO_PERMISSION"
  /** false when the static fields came from the StaticCache. */
  bool staticRead = true;
  double readMicros = 0;
};

struct Snapshot {
  std::string libraryPath;
  Opt<std::string> driverVersion;
  Opt<int> cudaDriverVersion;
  unsigned deviceCount = 0;
  std::vector<DeviceState> devices;
  /** Every pair of devices whose handles were read, by index. */
  std::vector<DevicePair> pairs;
  std::vector<std::string> degraded;
  unsigned reinitCount = 0;
  double readMicros = 0;
};

}  // namespace topod::nvml
