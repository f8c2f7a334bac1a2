#include "device-reader.h"

#include <climits>

#include "field-log.h"

namespace topod::nvml {

namespace {

// 1024 CPUs: NVML fills as many words as it needs and ignores the rest.
constexpr unsigned kCpuSetWords = 1024 / (sizeof(unsigned long) * CHAR_BIT);

Opt<std::string> readString(FieldLog& log, const char* field, nvmlDeviceGetString_fn fn, nvmlDevice_t device, unsigned size) {
  std::vector<char> buffer(size, '\0');
  if (!log.check(invoke(fn, device, buffer.data(), size), field)) return std::nullopt;
  return fromBuffer(buffer.data(), buffer.size());
}

Opt<unsigned> readUnsigned(FieldLog& log, const char* field, nvmlDeviceGetUint_fn fn, nvmlDevice_t device) {
  unsigned value = 0;
  if (!log.check(invoke(fn, device, &value), field)) return std::nullopt;
  return value;
}

Opt<MemoryInfo> readBar1(const Api& api, FieldLog& log, nvmlDevice_t device) {
  nvmlBAR1Memory_t bar1{};
  if (!log.check(invoke(api.deviceGetBAR1MemoryInfo, device, &bar1), "bar1")) return std::nullopt;
  return MemoryInfo{bar1.bar1Total, bar1.bar1Used, bar1.bar1Free};
}

Opt<unsigned> readMaxClock(const Api& api, FieldLog& log, nvmlDevice_t device, nvmlClockType_t type, const char* field) {
  unsigned mhz = 0;
  if (!log.check(invoke(api.deviceGetMaxClockInfo, device, type, &mhz), field)) return std::nullopt;
  return mhz;
}

Opt<std::string> readCpuAffinity(const Api& api, FieldLog& log, nvmlDevice_t device) {
  unsigned long mask[kCpuSetWords] = {};
  if (!log.check(invoke(api.deviceGetCpuAffinity, device, kCpuSetWords, mask), "cpuAffinity")) return std::nullopt;
  return cpuListFromMask(mask, kCpuSetWords);
}

// Links are probed in order until NVML says the index is out of range; a GPU
// without NVLink answers NOT_SUPPORTED on link 0, which is an answer, not a
// degradation.
std::vector<NvLink> readNvLinks(const Api& api, FieldLog& log, nvmlDevice_t device) {
  std::vector<NvLink> links;
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    nvmlEnableState_t state = NVML_FEATURE_DISABLED;
    nvmlReturn_t code = invoke(api.deviceGetNvLinkState, device, link, &state);
    if (code == NVML_ERROR_NOT_SUPPORTED || code == NVML_ERROR_INVALID_ARGUMENT) break;
    if (!log.check(code, "nvlink[" + std::to_string(link) + "]")) continue;
    if (state != NVML_FEATURE_ENABLED) continue;
    NvLink entry;
    entry.link = link;
    nvmlPciInfo_t remote{};
    if (log.check(invoke(api.deviceGetNvLinkRemotePciInfo, device, link, &remote), "nvlink[" + std::to_string(link) + "].remotePciBusId"))
      entry.remotePciBusId = fromBuffer(remote.busId, sizeof remote.busId);
    // On HGX boards every link ends at an NVSwitch, whose bus id names no GPU: the type says so.
    nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
    if (log.check(invoke(api.deviceGetNvLinkRemoteDeviceType, device, link, &type), "nvlink.remoteDeviceType"))
      entry.remoteDeviceType = static_cast<unsigned>(type);
    links.push_back(std::move(entry));
  }
  return links;
}

}  // namespace

std::string cpuListFromMask(const unsigned long* mask, unsigned words) {
  constexpr unsigned kBits = sizeof(unsigned long) * CHAR_BIT;
  auto isSet = [&](unsigned cpu) { return (mask[cpu / kBits] >> (cpu % kBits)) & 1UL; };
  std::string out;
  const unsigned total = words * kBits;
  for (unsigned cpu = 0; cpu < total; ++cpu) {
    if (!isSet(cpu)) continue;
    unsigned last = cpu;
    while (last + 1 < total && isSet(last + 1)) ++last;
    if (!out.empty()) out += ',';
    out += std::to_string(cpu);
    if (last > cpu) out += '-' + std::to_string(last);
    cpu = last;
  }
  return out;
}

Opt<MemoryInfo> readMemory(const Api& api, FieldLog& log, nvmlDevice_t device) {
  // v2 separates driver-reserved memory; its `used` excludes it, like nvidia-smi.
  if (api.deviceGetMemoryInfoV2) {
    nvmlMemory_v2_t memory{};
    memory.version = kNvmlMemoryV2;
    nvmlReturn_t code = api.deviceGetMemoryInfoV2(device, &memory);
    if (code == NVML_SUCCESS) return MemoryInfo{memory.total, memory.used, memory.free};
    if (code != NVML_ERROR_NOT_SUPPORTED && code != NVML_ERROR_ARGUMENT_VERSION_MISMATCH) {
      log.check(code, "memory");
      return std::nullopt;
    }
  }
  nvmlMemory_t memory{};
  if (!log.check(invoke(api.deviceGetMemoryInfo, device, &memory), "memory")) return std::nullopt;
  return MemoryInfo{memory.total, memory.used, memory.free};
}

Opt<std::string> readUuid(const Api& api, FieldLog& log, nvmlDevice_t device) {
  return readString(log, "uuid", api.deviceGetUUID, device, NVML_DEVICE_UUID_V2_BUFFER_SIZE);
}

void readIdentity(const Api& api, FieldLog& log, nvmlDevice_t device, DeviceState& out) {
  out.name = readString(log, "name", api.deviceGetName, device, NVML_DEVICE_NAME_V2_BUFFER_SIZE);
  out.serial = readString(log, "serial", api.deviceGetSerial, device, NVML_DEVICE_SERIAL_BUFFER_SIZE);
  nvmlPciInfo_t pci{};
  if (log.check(invoke(api.deviceGetPciInfo, device, &pci), "pciBusId")) out.pciBusId = fromBuffer(pci.busId, sizeof pci.busId);
  out.architecture = readUnsigned(log, "architecture", api.deviceGetArchitecture, device);
}

// Totals come with the used/free figures in the same call, so they are read here too.
void readUsage(const Api& api, FieldLog& log, nvmlDevice_t device, DeviceState& out) {
  out.memory = readMemory(api, log, device);
  out.bar1 = readBar1(api, log, device);
}

void readLimits(const Api& api, FieldLog& log, nvmlDevice_t device, DeviceState& out) {
  out.maxSmClockMHz = readMaxClock(api, log, device, NVML_CLOCK_SM, "maxClocks.sm");
  out.maxMemoryClockMHz = readMaxClock(api, log, device, NVML_CLOCK_MEM, "maxClocks.memory");
  out.memoryBusWidthBits = readUnsigned(log, "memoryBusWidth", api.deviceGetMemoryBusWidth, device);
  out.pcieMaxGen = readUnsigned(log, "pcie.maxGen", api.deviceGetMaxPcieLinkGeneration, device);
  out.pcieMaxWidth = readUnsigned(log, "pcie.maxWidth", api.deviceGetMaxPcieLinkWidth, device);
  out.numaNode = readUnsigned(log, "numaNode", api.deviceGetNumaNodeId, device);
  out.cpuAffinity = readCpuAffinity(api, log, device);
}

// The link trains down when idle (power saving) and NVLinks can fail: both live.
void readLinks(const Api& api, FieldLog& log, nvmlDevice_t device, DeviceState& out) {
  out.pcieCurrentGen = readUnsigned(log, "pcie.currentGen", api.deviceGetCurrPcieLinkGeneration, device);
  out.pcieCurrentWidth = readUnsigned(log, "pcie.currentWidth", api.deviceGetCurrPcieLinkWidth, device);
  out.nvlinks = readNvLinks(api, log, device);
}

}  // namespace topod::nvml
