// hello: versions, the ops this probe answers (the registry's keys) and every
// device the runtime sees, all DeviceProperties fields.
#include <cctype>
#include <cstdio>
#include <string>

#include "args.h"
#include "registry.h"
#include "runtime.h"
#include "version.h"

namespace topod::probe {

namespace {

struct HelloSpec {};

HelloSpec validate_hello(const json::Value& args, const OpContext&) {
  ArgReader reader(args);  // only checks that args is an object
  (void)reader;
  return {};
}

std::string format_uuid(const unsigned char b[16]) {
  char out[64];
  std::snprintf(out, sizeof out, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
                b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return out;
}

// The runtime writes "0000:07:00.0"; NVML (and protocol.ts) use an 8-digit
// domain, "00000000:07:00.0", so the daemon can match the two by string.
std::string nvml_style_bus_id(const char* runtimeBusId) {
  std::string id(runtimeBusId);
  const size_t colon = id.find(':');
  if (colon != std::string::npos && colon < 8 && id.find(':', colon + 1) != std::string::npos) id.insert(0, 8 - colon, '0');
  for (char& c : id) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return id;
}

// An attribute CUDA 13 dropped from the property struct; null when the runtime does not answer.
json::Value attribute_or_null(hipDeviceAttribute_t attr, int device) {
  int value = 0;
  if (hipDeviceGetAttribute(&value, attr, device) != hipSuccess || value <= 0) {
    (void)hipGetLastError();
    return json::Value(nullptr);
  }
  return json::Value(value);
}

json::Value positive_or_null(long long v) { return v > 0 ? json::Value(v) : json::Value(nullptr); }

// A size the runtime may not have (compat:: returns false): null then.
json::Value size_or_null(bool known, size_t v) { return known ? json::Value(static_cast<unsigned long long>(v)) : json::Value(nullptr); }

json::Value describe_device(int device) {
  hipDeviceProp_t p{};
  check(hipGetDeviceProperties(&p, device), "hipGetDeviceProperties");
  unsigned char uuid[16] = {};
  check(compat::device_uuid(device, p, uuid), "device uuid");
  char busId[32] = {};
  json::Value pciBusId(nullptr);
  if (hipDeviceGetPCIBusId(busId, sizeof busId, device) == hipSuccess) pciBusId = json::Value(nvml_style_bus_id(busId));
  char arch[64] = {};
  compat::architecture_name(p, arch, sizeof arch);
  size_t reservedShared = 0, fetchGranularity = 0;
  const bool hasReservedShared = compat::reserved_shared_mem_per_block(p, &reservedShared);
  const bool hasFetchGranularity = compat::max_l2_fetch_granularity(device, &fetchGranularity);

  json::Value d = json::Value::object();
  d.set("index", device)
      .set("uuid", format_uuid(uuid))
      .set("name", std::string(p.name))
      .set("pciBusId", pciBusId)
      .set("architecture", std::string(arch))
      .set("computeCapabilityMajor", p.major)
      .set("computeCapabilityMinor", p.minor)
      .set("multiprocessorCount", p.multiProcessorCount)
      .set("clockRateKHz", attribute_or_null(hipDeviceAttributeClockRate, device))
      .set("memoryClockRateKHz", attribute_or_null(hipDeviceAttributeMemoryClockRate, device))
      .set("memoryBusWidthBits", positive_or_null(p.memoryBusWidth))
      .set("totalMemoryBytes", static_cast<unsigned long long>(p.totalGlobalMem))
      .set("l2CacheSizeBytes", p.l2CacheSize)
#if defined(TOPOD_VENDOR_NVIDIA)
      .set("persistingL2CacheMaxBytes", positive_or_null(p.persistingL2CacheMaxSize))
#else
      .set("persistingL2CacheMaxBytes", nullptr)
#endif
      .set("sharedMemPerMultiprocessorBytes", static_cast<unsigned long long>(compat::shared_mem_per_sm(p)))
      .set("sharedMemPerBlockBytes", static_cast<unsigned long long>(p.sharedMemPerBlock))
      .set("sharedMemPerBlockOptinBytes", positive_or_null(static_cast<long long>(compat::shared_mem_per_block_optin(p))))
      .set("totalConstMemBytes", positive_or_null(static_cast<long long>(p.totalConstMem)))
      .set("regsPerMultiprocessor", positive_or_null(compat::regs_per_sm(p)))
      .set("regsPerBlock", positive_or_null(p.regsPerBlock))
      .set("warpSize", p.warpSize)
      .set("maxThreadsPerBlock", p.maxThreadsPerBlock)
      .set("maxThreadsPerMultiprocessor", positive_or_null(p.maxThreadsPerMultiProcessor))
#if defined(TOPOD_VENDOR_NVIDIA)
      .set("maxBlocksPerMultiprocessor", positive_or_null(p.maxBlocksPerMultiProcessor))
#else
      .set("maxBlocksPerMultiprocessor", nullptr)
#endif
      .set("reservedSharedMemPerBlockBytes", size_or_null(hasReservedShared, reservedShared))
      .set("maxL2FetchGranularityBytes", size_or_null(hasFetchGranularity, fetchGranularity))
      .set("concurrentKernels", p.concurrentKernels != 0)
      .set("cooperativeLaunch", p.cooperativeLaunch != 0);
  // HIP's device properties have no L1 caching flags (its attributes say "CUDA only"), CUDA's no ASIC revision.
#if defined(TOPOD_VENDOR_NVIDIA)
  d.set("globalL1CacheSupported", p.globalL1CacheSupported != 0)
      .set("localL1CacheSupported", p.localL1CacheSupported != 0)
      .set("asicRevision", nullptr);
#else
  d.set("asicRevision", p.asicRevision);
#endif
  return d;
}

json::Value run_hello(const HelloSpec&, const OpContext& ctx) {
  int runtimeVersion = 0, driverVersion = 0;
  (void)hipRuntimeGetVersion(&runtimeVersion);
  (void)hipDriverGetVersion(&driverVersion);
  json::Value devices = json::Value::array();
  for (int i = 0; i < ctx.deviceCount; ++i) devices.push(describe_device(i));
  json::Value ops = json::Value::array();
  for (const std::string& key : ctx.ops) ops.push(json::Value(key));
  json::Value out = json::Value::object();
  out.set("probeVersion", TOPOD_PROBE_VERSION)
      .set("protocolVersion", TOPOD_PROTOCOL_VERSION)
      .set("vendor", TOPOD_VENDOR_NAME)
      .set("runtimeVersion", runtimeVersion)
      .set("driverVersion", driverVersion)
      .set("ops", ops)
      .set("devices", devices);
  return out;
}

}  // namespace

void register_hello(Registry& r) { r.add<HelloSpec>("hello", validate_hello, run_hello); }

}  // namespace topod::probe
