#include "activity-reader.h"

#include <algorithm>
#include <chrono>

#include "device-reader.h"
#include "field-log.h"
#include "mig-reader.h"
#include "session.h"

namespace topod::nvml {

namespace {

// A process list is sized by a first call, then read; a process that starts
// in between makes the read answer INSUFFICIENT_SIZE. Slack and a few rounds
// absorb that without failing the list on a busy node.
constexpr unsigned kProcessSlack = 8;
constexpr int kProcessListAttempts = 4;

double microsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

ProcessEntry processFrom(const nvmlProcessInfo_v2_t& info) {
  ProcessEntry entry;
  entry.pid = info.pid;
  // Under some containers and virtualisation the driver cannot attribute memory.
  if (info.usedGpuMemory != kNvmlValueNotAvailable) entry.usedMemoryBytes = info.usedGpuMemory;
  if (info.gpuInstanceId != kNvmlNoInstanceId) entry.gpuInstanceId = info.gpuInstanceId;
  if (info.computeInstanceId != kNvmlNoInstanceId) entry.computeInstanceId = info.computeInstanceId;
  return entry;
}

Opt<std::vector<ProcessEntry>> readProcesses(FieldLog& log, nvmlDeviceGetRunningProcesses_fn fn, nvmlDevice_t device, const char* field) {
  unsigned needed = 0;
  nvmlReturn_t code = invoke(fn, device, &needed, static_cast<nvmlProcessInfo_v2_t*>(nullptr));
  if (code == NVML_SUCCESS) return std::vector<ProcessEntry>{};  // the size query succeeds only when none run
  for (int attempt = 0; attempt < kProcessListAttempts && code == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    std::vector<nvmlProcessInfo_v2_t> raw(needed + kProcessSlack);
    unsigned filled = static_cast<unsigned>(raw.size());
    code = invoke(fn, device, &filled, raw.data());
    if (code == NVML_SUCCESS) {
      std::vector<ProcessEntry> out;
      for (unsigned i = 0; i < filled && i < raw.size(); ++i) out.push_back(processFrom(raw[i]));
      return out;
    }
    needed = filled;
  }
  log.check(code, field);
  return std::nullopt;
}

ProcessLists readProcessLists(const Api& api, FieldLog& log, nvmlDevice_t device) {
  ProcessLists lists;
  lists.compute = readProcesses(log, api.deviceGetComputeRunningProcesses, device, "processes.compute");
  lists.graphics = readProcesses(log, api.deviceGetGraphicsRunningProcesses, device, "processes.graphics");
  return lists;
}

double sampleValue(nvmlValueType_t type, const nvmlValue_t& value) {
  switch (type) {
    case NVML_VALUE_TYPE_DOUBLE:
      return value.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return static_cast<double>(value.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return static_cast<double>(value.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return static_cast<double>(value.sllVal);
    default:
      return value.uiVal;  // utilization samples come as unsigned int
  }
}

// All the driver buffers (lastSeenTimeStamp 0): the window is cut in
// TypeScript against the newest sample, so no clock here has to agree with
// the driver's time stamps. NOT_FOUND means the buffer is empty: an answer.
Opt<std::vector<UtilizationSample>> readUtilizationSamples(const Api& api, FieldLog& log, nvmlDevice_t device) {
  nvmlValueType_t type = NVML_VALUE_TYPE_UNSIGNED_INT;
  unsigned count = 0;
  nvmlReturn_t code = invoke(api.deviceGetSamples, device, nvmlSamplingType_t{NVML_GPU_UTILIZATION_SAMPLES}, 0ULL, &type, &count,
                             static_cast<nvmlSample_t*>(nullptr));
  if (code == NVML_ERROR_NOT_FOUND || (code == NVML_SUCCESS && count == 0)) return std::vector<UtilizationSample>{};
  if (!log.check(code, "utilizationSamples")) return std::nullopt;
  std::vector<nvmlSample_t> raw(count);
  code = invoke(api.deviceGetSamples, device, nvmlSamplingType_t{NVML_GPU_UTILIZATION_SAMPLES}, 0ULL, &type, &count, raw.data());
  if (code == NVML_ERROR_NOT_FOUND) return std::vector<UtilizationSample>{};
  if (!log.check(code, "utilizationSamples")) return std::nullopt;
  std::vector<UtilizationSample> out;
  for (unsigned i = 0; i < count && i < raw.size(); ++i) out.push_back({raw[i].timeStamp, sampleValue(type, raw[i].sampleValue)});
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.timestampMicros < b.timestampMicros; });
  return out;
}

template <typename T, typename Fn, typename... Args>
Opt<T> readValue(FieldLog& log, const char* field, Fn fn, nvmlDevice_t device, Args... args) {
  T value{};
  if (!log.check(invoke(fn, device, args..., &value), field)) return std::nullopt;
  return value;
}

Opt<bool> readEnabled(FieldLog& log, const char* field, nvmlDeviceGetEnableState_fn fn, nvmlDevice_t device) {
  auto state = readValue<nvmlEnableState_t>(log, field, fn, device);
  return state ? Opt<bool>(*state == NVML_FEATURE_ENABLED) : std::nullopt;
}

// MIG device handles answer the process lists (per instance, to any reader);
// utilization, clocks, temperature and power are NOT_SUPPORTED there, so they
// are not asked.
std::vector<MigActivity> readMigActivity(const Api& api, FieldLog& log, nvmlDevice_t device) {
  std::vector<MigActivity> out;
  forEachMigDevice(api, log, device, [&](unsigned index, nvmlDevice_t mig) {
    MigActivity entry;
    entry.index = index;
    FieldLog migLog(entry.degraded);
    entry.uuid = readUuid(api, migLog, mig);
    entry.processes = readProcessLists(api, migLog, mig);
    out.push_back(std::move(entry));
  });
  return out;
}

void readDeviceActivity(const Api& api, nvmlDevice_t device, ActivityState& out) {
  FieldLog log(out.degraded);
  out.processes = readProcessLists(api, log, device);
  nvmlUtilization_t utilization{};
  if (log.check(invoke(api.deviceGetUtilizationRates, device, &utilization), "utilization")) {
    out.utilizationGpuPercent = utilization.gpu;
    out.utilizationMemoryPercent = utilization.memory;
  }
  out.utilizationSamples = readUtilizationSamples(api, log, device);
  out.memory = readMemory(api, log, device);
  out.temperatureC =
      readValue<unsigned>(log, "temperature", api.deviceGetTemperature, device, nvmlTemperatureSensors_t{NVML_TEMPERATURE_GPU});
  out.powerMilliwatts = readValue<unsigned>(log, "powerUsage", api.deviceGetPowerUsage, device);
  out.smClockMHz = readValue<unsigned>(log, "clocks.sm", api.deviceGetClockInfo, device, nvmlClockType_t{NVML_CLOCK_SM});
  out.maxSmClockMHz = readValue<unsigned>(log, "maxClocks.sm", api.deviceGetMaxClockInfo, device, nvmlClockType_t{NVML_CLOCK_SM});
  out.clocksEventReasons = readValue<unsigned long long>(log, "clocksEventReasons", api.deviceGetCurrentClocksEventReasons, device);
  out.persistenceMode = readEnabled(log, "persistenceMode", api.deviceGetPersistenceMode, device);
  nvmlEnableState_t eccCurrent = NVML_FEATURE_DISABLED;
  nvmlEnableState_t eccPending = NVML_FEATURE_DISABLED;
  if (log.check(invoke(api.deviceGetEccMode, device, &eccCurrent, &eccPending), "eccMode")) {
    out.eccModeCurrent = eccCurrent == NVML_FEATURE_ENABLED;
    out.eccModePending = eccPending == NVML_FEATURE_ENABLED;
  }
  // A GPU that cannot do MIG answers NOT_SUPPORTED: that is an answer, not a degradation.
  unsigned current = 0;
  unsigned pending = 0;
  nvmlReturn_t modeCode = invoke(api.deviceGetMigMode, device, &current, &pending);
  if (modeCode != NVML_ERROR_NOT_SUPPORTED && log.check(modeCode, "migMode")) out.migModeCurrent = current;
  if (out.migModeCurrent == NVML_DEVICE_MIG_ENABLE) out.migDevices = readMigActivity(api, log, device);
}

[[noreturn]] void notFound(const std::string& message) { throw ReadFailed{Outcome::failure("TOPOD_NVML_GPU_NOT_FOUND", "read", message)}; }

nvmlDevice_t handleAt(const Api& api, unsigned index) {
  nvmlDevice_t handle = nullptr;
  nvmlReturn_t code = api.deviceGetHandleByIndex(index, &handle);
  if (isSessionLost(code)) throw SessionLost{code};
  if (code != NVML_SUCCESS)
    throw ReadFailed{Outcome::failure(returnFullName(code), "read",
                                      "nvmlDeviceGetHandleByIndex(" + std::to_string(index) + ") failed: " + returnFullName(code))};
  return handle;
}

// By index, or by scanning for the UUID: nvmlDeviceGetHandleByUUID would also
// accept a MIG device's UUID and hand back a MIG handle, which this read is not for.
nvmlDevice_t findDevice(const Api& api, const ActivityOptions& options, ActivityState& out) {
  unsigned count = 0;
  nvmlReturn_t code = api.deviceGetCount(&count);
  if (isSessionLost(code)) throw SessionLost{code};
  if (code != NVML_SUCCESS)
    throw ReadFailed{Outcome::failure(returnFullName(code), "read", "nvmlDeviceGetCount failed: " + returnFullName(code))};
  FieldLog log(out.degraded);
  if (!options.uuid) {
    const unsigned index = options.index.value_or(0);
    if (index >= count) notFound("no GPU at index " + std::to_string(index) + " (NVML lists " + std::to_string(count) + ")");
    nvmlDevice_t handle = handleAt(api, index);
    out.index = index;
    out.uuid = readUuid(api, log, handle);
    return handle;
  }
  std::vector<std::string> scanRefusals;  // other GPUs' unreadable UUIDs are not this read's business
  FieldLog scanLog(scanRefusals);
  for (unsigned index = 0; index < count; ++index) {
    nvmlDevice_t handle = handleAt(api, index);
    if (readUuid(api, scanLog, handle) == options.uuid) {
      out.index = index;
      out.uuid = options.uuid;
      return handle;
    }
  }
  notFound("no GPU with UUID " + *options.uuid + " (NVML lists " + std::to_string(count) + ")");
}

}  // namespace

ActivityResult readActivity(const ActivityOptions& options) {
  ActivityResult result;
  auto start = std::chrono::steady_clock::now();
  result.outcome = readInSession(
      options.libraryPath,
      [&](const Library& library) {
        result.activity = ActivityState{};
        nvmlDevice_t device = findDevice(library.api(), options, result.activity);
        readDeviceActivity(library.api(), device, result.activity);
      },
      [&](const Library& library) {
        result.activity.libraryPath = library.path();
        result.activity.reinitCount = library.reinitCount();
      });
  result.activity.readMicros = microsSince(start);
  return result;
}

}  // namespace topod::nvml
