#include "scenario.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "activity-scenario.h"
#include "json.hpp"
#include "nvml-return.h"

namespace topod::fake {

namespace json = topod::json;

namespace {

// Profile ids NVML reports on A100/H100/H200 and the profile index that
// queries them (nvml.h NVML_GPU_INSTANCE_PROFILE_*); others need
// "profileIndex" in the scenario.
constexpr std::pair<unsigned, unsigned> kKnownProfileIndex[] = {
    {19, NVML_GPU_INSTANCE_PROFILE_1_SLICE},      {14, NVML_GPU_INSTANCE_PROFILE_2_SLICE}, {9, NVML_GPU_INSTANCE_PROFILE_3_SLICE},
    {5, NVML_GPU_INSTANCE_PROFILE_4_SLICE},       {0, NVML_GPU_INSTANCE_PROFILE_7_SLICE},  {20, NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1},
    {15, NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2},
};

constexpr std::pair<const char*, unsigned> kNvLinkDeviceTypes[] = {{"gpu", NVML_NVLINK_DEVICE_TYPE_GPU},
                                                                   {"ibmnpu", NVML_NVLINK_DEVICE_TYPE_IBMNPU},
                                                                   {"switch", NVML_NVLINK_DEVICE_TYPE_SWITCH},
                                                                   {"unknown", NVML_NVLINK_DEVICE_TYPE_UNKNOWN}};

// As `nvidia-smi topo -m` abbreviates them, and as nvml.h names them.
constexpr std::pair<const char*, unsigned> kTopologyLevels[] = {
    {"internal", NVML_TOPOLOGY_INTERNAL}, {"single", NVML_TOPOLOGY_SINGLE}, {"PIX", NVML_TOPOLOGY_SINGLE},
    {"multiple", NVML_TOPOLOGY_MULTIPLE}, {"PXB", NVML_TOPOLOGY_MULTIPLE},  {"hostbridge", NVML_TOPOLOGY_HOSTBRIDGE},
    {"PHB", NVML_TOPOLOGY_HOSTBRIDGE},    {"node", NVML_TOPOLOGY_NODE},     {"NODE", NVML_TOPOLOGY_NODE},
    {"system", NVML_TOPOLOGY_SYSTEM},     {"SYS", NVML_TOPOLOGY_SYSTEM}};

constexpr std::pair<const char*, unsigned> kP2PCaps[] = {{"read", NVML_P2P_CAPS_INDEX_READ},
                                                         {"write", NVML_P2P_CAPS_INDEX_WRITE},
                                                         {"nvlink", NVML_P2P_CAPS_INDEX_NVLINK},
                                                         {"atomics", NVML_P2P_CAPS_INDEX_ATOMICS},
                                                         {"pci", NVML_P2P_CAPS_INDEX_PCI}};

constexpr std::pair<const char*, unsigned> kP2PStatuses[] = {{"ok", NVML_P2P_STATUS_OK},
                                                             {"chipset-not-supported", NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED},
                                                             {"gpu-not-supported", NVML_P2P_STATUS_GPU_NOT_SUPPORTED},
                                                             {"ioh-topology-not-supported", NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED},
                                                             {"disabled-by-regkey", NVML_P2P_STATUS_DISABLED_BY_REGKEY},
                                                             {"not-supported", NVML_P2P_STATUS_NOT_SUPPORTED},
                                                             {"unknown", NVML_P2P_STATUS_UNKNOWN}};

/** A name from `table`, or the NVML number itself. */
template <size_t N>
unsigned named(const json::Value& v, const std::pair<const char*, unsigned> (&table)[N], const char* what) {
  if (v.is_number()) return static_cast<unsigned>(v.as_number());
  for (auto [name, code] : table)
    if (v.as_string() == name) return code;
  throw std::runtime_error(std::string("unknown ") + what + " \"" + v.as_string() + "\"");
}

constexpr std::pair<const char*, unsigned> kArchitectures[] = {
    {"kepler", 2}, {"maxwell", 3}, {"pascal", 4}, {"volta", 5}, {"turing", 6}, {"ampere", 7}, {"ada", 8}, {"hopper", 9}, {"blackwell", 10},
};

/** The member, or nullptr when absent or JSON null (both mean "NVML says NOT_SUPPORTED"). */
const json::Value* member(const json::Value& object, const char* key) {
  const json::Value* v = object.find(key);
  return (v && !v->is_null()) ? v : nullptr;
}

unsigned long long toInteger(const json::Value& v, const char* key) {
  double n = v.as_number();
  if (n < 0 || std::floor(n) != n) throw std::runtime_error(std::string(key) + " must be a non-negative integer");
  return static_cast<unsigned long long>(n);
}

Opt<unsigned long long> optU64(const json::Value& object, const char* key) {
  const json::Value* v = member(object, key);
  return v ? Opt<unsigned long long>(toInteger(*v, key)) : std::nullopt;
}

Opt<unsigned> optU32(const json::Value& object, const char* key) {
  auto v = optU64(object, key);
  return v ? Opt<unsigned>(static_cast<unsigned>(*v)) : std::nullopt;
}

unsigned reqU32(const json::Value& object, const char* key) {
  auto v = optU32(object, key);
  if (!v) throw std::runtime_error(std::string("missing \"") + key + "\"");
  return *v;
}

Opt<std::string> optString(const json::Value& object, const char* key) {
  const json::Value* v = member(object, key);
  return v ? Opt<std::string>(v->as_string()) : std::nullopt;
}

bool flag(const json::Value& object, const char* key, bool fallback) {
  const json::Value* v = member(object, key);
  return v ? v->as_bool() : fallback;
}

nvmlReturn_t returnCode(const json::Value& v) {
  nvmlReturn_t code = v.is_number() ? static_cast<nvmlReturn_t>(v.as_number()) : nvml::parseReturnName(v.as_string());
  if (code < 0) throw std::runtime_error("unknown NVML return code " + json::dump(v));
  return code;
}

/** "0-3,8" → {0,1,2,3,8}. */
std::vector<unsigned> parseCpuList(const std::string& text) {
  std::vector<unsigned> cpus;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    unsigned first = 0, last = 0;
    int matched = std::sscanf(part.c_str(), "%u-%u", &first, &last);
    if (matched < 1) throw std::runtime_error("bad cpu list \"" + text + "\"");
    if (matched == 1) last = first;
    for (unsigned cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return cpus;
}

FakePlacement placement(const json::Value& v) { return {reqU32(v, "start"), reqU32(v, "size")}; }

FakeProfile parseProfile(const json::Value& v) {
  FakeProfile p;
  p.id = reqU32(v, "id");
  Opt<unsigned> index = optU32(v, "profileIndex");
  if (!index)
    for (auto [id, known] : kKnownProfileIndex)
      if (id == p.id) index = known;
  if (!index) throw std::runtime_error("profile " + std::to_string(p.id) + " needs \"profileIndex\"");
  p.profileIndex = *index;
  p.name = optString(v, "name").value_or("");
  p.sliceCount = reqU32(v, "sliceCount");
  p.instanceCount = reqU32(v, "instanceCount");
  p.multiprocessorCount = reqU32(v, "multiprocessorCount");
  p.copyEngineCount = optU32(v, "copyEngineCount").value_or(0);
  p.memorySizeMB = optU64(v, "memorySizeMB").value_or(0);
  if (const json::Value* list = member(v, "placements"))
    for (const auto& item : list->as_array()) p.placements.push_back(placement(item));
  return p;
}

FakeGpuInstance parseGpuInstance(const json::Value& v, const FakeDevice& device) {
  FakeGpuInstance gi;
  gi.id = reqU32(v, "id");
  unsigned profileId = reqU32(v, "profileId");
  gi.profile = device.profileById(profileId);
  if (!gi.profile) throw std::runtime_error("GPU instance " + std::to_string(gi.id) + ": unknown profile " + std::to_string(profileId));
  gi.placement = member(v, "placement") ? placement(v.get("placement")) : FakePlacement{0, gi.profile->sliceCount};
  std::string giUuid = optString(v, "migDeviceUuid").value_or("MIG-fake-gi" + std::to_string(gi.id));
  const json::Value* cis = member(v, "computeInstances");
  if (!cis) {
    FakeComputeInstance whole;
    whole.sliceCount = gi.profile->sliceCount;
    whole.multiprocessorCount = gi.profile->multiprocessorCount;
    whole.migDeviceUuid = giUuid;
    whole.processes = parseProcesses(v);
    gi.computeInstances.push_back(whole);
    return gi;
  }
  for (const auto& item : cis->as_array()) {
    FakeComputeInstance ci;
    ci.id = reqU32(item, "id");
    ci.multiprocessorCount = optU32(item, "multiprocessorCount").value_or(gi.profile->multiprocessorCount);
    // Slices default to the share of the GPU instance's SMs this CI holds.
    double perSlice = double(gi.profile->multiprocessorCount) / std::max(gi.profile->sliceCount, 1U);
    ci.sliceCount =
        optU32(item, "sliceCount").value_or(std::max(1U, static_cast<unsigned>(std::lround(ci.multiprocessorCount / perSlice))));
    bool first = gi.computeInstances.empty();
    ci.migDeviceUuid = optString(item, "migDeviceUuid").value_or(first ? giUuid : giUuid + "-ci" + std::to_string(ci.id));
    // The GPU instance's own processes run on its first compute instance, the one that carries its UUID.
    ci.processes = parseProcesses(item);
    if (first)
      for (const auto& process : parseProcesses(v)) ci.processes.push_back(process);
    gi.computeInstances.push_back(ci);
  }
  return gi;
}

FakeDevice parseDevice(const json::Value& v) {
  FakeDevice d;
  d.uuid = optString(v, "uuid");
  d.name = optString(v, "name");
  d.serial = optString(v, "serial");
  d.pciBusId = optString(v, "pciBusId");
  if (const json::Value* arch = member(v, "architecture")) {
    if (arch->is_number()) {
      d.architecture = static_cast<unsigned>(arch->as_number());
    } else {
      for (auto [name, code] : kArchitectures)
        if (arch->as_string() == name) d.architecture = code;
      if (!d.architecture) throw std::runtime_error("unknown architecture " + arch->as_string());
    }
  }
  d.memoryTotalBytes = optU64(v, "memoryTotalBytes");
  d.memoryUsedBytes = optU64(v, "memoryUsedBytes");
  d.memoryReservedBytes = optU64(v, "memoryReservedBytes");
  d.bar1TotalBytes = optU64(v, "bar1TotalBytes");
  d.bar1UsedBytes = optU64(v, "bar1UsedBytes");
  if (const json::Value* clocks = member(v, "maxClocks")) {
    d.maxSmClockMHz = optU32(*clocks, "smMHz");
    d.maxMemoryClockMHz = optU32(*clocks, "memoryMHz");
  }
  d.memoryBusWidthBits = optU32(v, "memoryBusWidthBits");
  if (const json::Value* pcie = member(v, "pcie")) {
    d.pcieCurrentGen = optU32(*pcie, "currentGen");
    d.pcieMaxGen = optU32(*pcie, "maxGen");
    d.pcieCurrentWidth = optU32(*pcie, "currentWidth");
    d.pcieMaxWidth = optU32(*pcie, "maxWidth");
  }
  d.numaNode = optU32(v, "numaNode");
  if (auto cpus = optString(v, "cpuAffinity")) d.cpuAffinity = parseCpuList(*cpus);
  if (const json::Value* links = member(v, "nvlinks"))
    for (const auto& link : links->as_array()) {
      d.nvlinks.emplace_back(reqU32(link, "link"), optString(link, "remotePciBusId").value_or(""));
      if (const json::Value* type = member(link, "remoteDeviceType"))
        d.nvlinkRemoteTypes[reqU32(link, "link")] = named(*type, kNvLinkDeviceTypes, "remoteDeviceType");
    }
  d.activity = parseActivity(v, d.maxMemoryClockMHz);
  if (const json::Value* mode = member(v, "migMode")) d.migMode = std::make_pair(reqU32(*mode, "current"), reqU32(*mode, "pending"));
  if (const json::Value* profiles = member(v, "gpuInstanceProfiles"))
    for (const auto& item : profiles->as_array()) d.profiles.push_back(parseProfile(item));
  if (const json::Value* permissions = member(v, "permissions")) {
    d.placementsAllowed = flag(*permissions, "placements", true);
    d.gpuInstancesAllowed = flag(*permissions, "gpuInstances", true);
  }
  if (const json::Value* instances = member(v, "gpuInstances"))
    for (const auto& item : instances->as_array()) d.gpuInstances.push_back(parseGpuInstance(item, d));
  return d;
}

// Back-pointers are set once every vector has its final size, so they stay valid.
void link(Scenario& scenario) {
  for (auto& device : scenario.devices) {
    device.handle = {&device, nullptr};
    for (auto& gi : device.gpuInstances) {
      gi.device = &device;
      for (auto& ci : gi.computeInstances) {
        ci.gpuInstance = &gi;
        ci.handle = {&device, &ci};
      }
    }
  }
}

}  // namespace

const FakeProfile* FakeDevice::profileById(unsigned id) const {
  for (const auto& p : profiles)
    if (p.id == id) return &p;
  return nullptr;
}

const FakeDevicePair* Scenario::pair(unsigned a, unsigned b) const {
  for (const auto& p : links)
    if ((p.a == a && p.b == b) || (p.a == b && p.b == a)) return &p;
  return nullptr;
}

std::vector<FakeComputeInstance*> FakeDevice::migDevices() {
  std::vector<FakeComputeInstance*> out;
  for (auto& gi : gpuInstances)
    for (auto& ci : gi.computeInstances) out.push_back(&ci);
  return out;
}

std::unique_ptr<Scenario> parseScenario(const std::string& text) {
  json::Value root = json::parse(text);
  auto scenario = std::make_unique<Scenario>();
  scenario->driverVersion = optString(root, "driverVersion").value_or("580.0.0-fake");
  if (const json::Value* cuda = member(root, "cudaDriverVersion")) scenario->cudaDriverVersion = static_cast<int>(cuda->as_number());
  if (const json::Value* devices = member(root, "devices"))
    for (const auto& item : devices->as_array()) scenario->devices.push_back(parseDevice(item));
  if (const json::Value* links = member(root, "links"))
    for (const auto& item : links->as_array()) {
      FakeDevicePair pair;
      const auto& ends = item.get("devices").as_array();
      if (ends.size() != 2) throw std::runtime_error("links[].devices must name two device indices");
      pair.a = static_cast<unsigned>(toInteger(ends[0], "devices"));
      pair.b = static_cast<unsigned>(toInteger(ends[1], "devices"));
      if (const json::Value* level = member(item, "commonAncestor")) pair.commonAncestor = named(*level, kTopologyLevels, "commonAncestor");
      if (const json::Value* caps = member(item, "p2p"))
        for (const auto& [cap, status] : caps->as_object())
          pair.p2p[named(json::Value(cap), kP2PCaps, "p2p capability")] = named(status, kP2PStatuses, "p2p status");
      scenario->links.push_back(std::move(pair));
    }
  scenario->callDelayMicros = optU32(root, "callDelayMicros").value_or(0);
  scenario->callLog = optString(root, "callLog").value_or("");
  if (const json::Value* failures = member(root, "failures")) {
    if (const json::Value* init = member(*failures, "init")) scenario->initFailure = returnCode(*init);
    scenario->rmVersionMismatch = optU32(*failures, "rmVersionMismatch").value_or(0);
    if (const json::Value* calls = member(*failures, "calls"))
      for (const auto& [function, code] : calls->as_object()) scenario->callFailures[function] = returnCode(code);
  }
  link(*scenario);
  return scenario;
}

}  // namespace topod::fake
