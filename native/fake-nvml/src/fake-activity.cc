// Fake NVML: what runs on a GPU and how it runs — running processes (on the
// GPU and on each MIG device), utilization and its samples, temperature,
// power, clocks and their event reasons, persistence and ECC mode.
#include <sys/time.h>

#include <algorithm>
#include <vector>

#include "fake-api.h"

using namespace topod::fake;

namespace {

struct Listed {
  const FakeProcess* process;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};

// On a MIG device handle: that compute instance's processes. On the GPU: its
// own, and with MIG on every instance's too, with their ids — what a
// privileged reader of the physical GPU is given.
std::vector<Listed> processesOf(FakeHandle* handle, bool compute) {
  std::vector<Listed> out;
  auto wanted = [&](const FakeProcess& p) { return compute ? p.compute : p.graphics; };
  auto addInstance = [&](const FakeComputeInstance& ci) {
    for (const auto& p : ci.processes)
      if (wanted(p)) out.push_back({&p, ci.gpuInstance->id, ci.id});
  };
  if (handle->mig) {
    addInstance(*handle->mig);
    return out;
  }
  for (const auto& p : handle->device->activity.processes)
    if (wanted(p)) out.push_back({&p, kNvmlNoInstanceId, kNvmlNoInstanceId});
  if (handle->device->migMode && handle->device->migMode->first == NVML_DEVICE_MIG_ENABLE)
    for (FakeComputeInstance* ci : handle->device->migDevices()) addInstance(*ci);
  return out;
}

nvmlReturn_t runningProcesses(nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_v2_t* infos, bool compute) {
  FakeHandle* handle = handleOf(device);
  if (!handle || !count) return NVML_ERROR_INVALID_ARGUMENT;
  std::vector<Listed> listed = processesOf(handle, compute);
  const unsigned needed = static_cast<unsigned>(listed.size());
  if (needed == 0) {
    *count = 0;
    return NVML_SUCCESS;
  }
  if (!infos || *count < needed) {
    *count = needed;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < needed; ++i) {
    const FakeProcess& p = *listed[i].process;
    infos[i] = nvmlProcessInfo_v2_t{p.pid, p.usedMemoryBytes.value_or(kNvmlValueNotAvailable), listed[i].gpuInstanceId,
                                    listed[i].computeInstanceId};
  }
  *count = needed;
  return NVML_SUCCESS;
}

/** The activity of a physical GPU; nullptr for a MIG device handle, where these queries are NOT_SUPPORTED. */
const FakeActivity* activityOf(nvmlDevice_t device) {
  FakeDevice* d = physical(device);
  return d ? &d->activity : nullptr;
}

// With MIG on, the driver does not attribute utilization to the whole GPU:
// nvidia-smi shows N/A there, and both queries answer NOT_SUPPORTED.
bool migEnabled(nvmlDevice_t device) {
  FakeDevice* d = physical(device);
  return d && d->migMode && d->migMode->first == NVML_DEVICE_MIG_ENABLE;
}

template <typename T>
nvmlReturn_t answer(nvmlDevice_t device, Opt<T> FakeActivity::*field, T* out) {
  const FakeActivity* a = activityOf(device);
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (!a) return NVML_ERROR_NOT_SUPPORTED;
  return copyOptional(a->*field, out);
}

unsigned long long nowMicros() {
  timeval now{};
  gettimeofday(&now, nullptr);
  return static_cast<unsigned long long>(now.tv_sec) * 1000000ULL + static_cast<unsigned long long>(now.tv_usec);
}

}  // namespace

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* infoCount,
                                                                   nvmlProcessInfo_v2_t* infos) {
  FAKE_ENTER();
  return runningProcesses(device, infoCount, infos, true);
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int* infoCount,
                                                                    nvmlProcessInfo_v2_t* infos) {
  FAKE_ENTER();
  return runningProcesses(device, infoCount, infos, false);
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  FAKE_ENTER();
  const FakeActivity* a = activityOf(device);
  if (!utilization) return NVML_ERROR_INVALID_ARGUMENT;
  if (!a || !a->utilizationPercent || migEnabled(device)) return NVML_ERROR_NOT_SUPPORTED;
  utilization->gpu = a->utilizationPercent->first;
  utilization->memory = a->utilizationPercent->second;
  return NVML_SUCCESS;
}

// The scenario's samples end now, one period apart, as the driver's ring
// buffer would hold them; only GPU utilization is modelled.
FAKE_NVML_API nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type, unsigned long long lastSeenTimeStamp,
                                                nvmlValueType_t* sampleValType, unsigned int* sampleCount, nvmlSample_t* samples) {
  FAKE_ENTER();
  const FakeActivity* a = activityOf(device);
  if (!sampleValType || !sampleCount) return NVML_ERROR_INVALID_ARGUMENT;
  if (!a || type != NVML_GPU_UTILIZATION_SAMPLES || !a->utilizationSamples || migEnabled(device)) return NVML_ERROR_NOT_SUPPORTED;
  const auto& values = *a->utilizationSamples;
  const unsigned long long now = nowMicros();
  std::vector<nvmlSample_t> fresh;
  for (size_t i = 0; i < values.size(); ++i) {
    nvmlSample_t sample{};
    sample.timeStamp = now - (values.size() - 1 - i) * a->samplePeriodMicros;
    sample.sampleValue.uiVal = static_cast<unsigned>(values[i] + 0.5);
    if (sample.timeStamp > lastSeenTimeStamp) fresh.push_back(sample);
  }
  if (fresh.empty()) return NVML_ERROR_NOT_FOUND;
  *sampleValType = NVML_VALUE_TYPE_UNSIGNED_INT;
  if (!samples) {
    *sampleCount = static_cast<unsigned>(fresh.size());
    return NVML_SUCCESS;
  }
  // Like the driver: as many as fit, the oldest first.
  const unsigned written = std::min(*sampleCount, static_cast<unsigned>(fresh.size()));
  for (unsigned i = 0; i < written; ++i) samples[i] = fresh[i];
  *sampleCount = written;
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int* temp) {
  FAKE_ENTER();
  if (sensorType != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  return answer(device, &FakeActivity::temperatureC, temp);
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  FAKE_ENTER();
  return answer(device, &FakeActivity::powerMilliwatts, power);
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  FAKE_ENTER();
  // Graphics and SM clocks move together on data-centre GPUs.
  if (type == NVML_CLOCK_SM || type == NVML_CLOCK_GRAPHICS) return answer(device, &FakeActivity::smClockMHz, clock);
  if (type == NVML_CLOCK_MEM) return answer(device, &FakeActivity::memoryClockMHz, clock);
  return NVML_ERROR_NOT_SUPPORTED;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* clocksEventReasons) {
  FAKE_ENTER();
  return answer(device, &FakeActivity::clocksEventReasons, clocksEventReasons);
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  FAKE_ENTER();
  const FakeActivity* a = activityOf(device);
  if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
  if (!a || !a->persistenceMode) return NVML_ERROR_NOT_SUPPORTED;
  *mode = *a->persistenceMode ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t* current, nvmlEnableState_t* pending) {
  FAKE_ENTER();
  const FakeActivity* a = activityOf(device);
  if (!current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
  if (!a || !a->eccMode) return NVML_ERROR_NOT_SUPPORTED;
  *current = a->eccMode->first ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  *pending = a->eccMode->second ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}
