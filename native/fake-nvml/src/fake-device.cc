// Fake NVML: per-device queries, on physical GPUs and on MIG device handles.
#include <algorithm>
#include <climits>
#include <cstdio>

#include "fake-api.h"

using namespace topod::fake;

namespace {

/** Parses "00000000:07:00.0" into the numeric fields of nvmlPciInfo_t. */
nvmlReturn_t fillPciInfo(const std::string& busId, nvmlPciInfo_t* pci) {
  if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
  *pci = nvmlPciInfo_t{};
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  std::sscanf(busId.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function);
  pci->domain = domain;
  pci->bus = bus;
  pci->device = device;
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", domain & 0xffff, bus, device);
  return copyString(busId, pci->busId, sizeof pci->busId);
}

nvmlReturn_t physicalUnsigned(nvmlDevice_t device, Opt<unsigned> FakeDevice::*field, unsigned int* out) {
  FakeDevice* d = physical(device);
  if (!d) return NVML_ERROR_NOT_SUPPORTED;
  return copyOptional(d->*field, out);
}

}  // namespace

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  FAKE_ENTER();
  FakeHandle* handle = handleOf(device);
  if (!handle) return NVML_ERROR_INVALID_ARGUMENT;
  if (handle->mig) return copyString(handle->mig->migDeviceUuid, uuid, length);
  return copyOptionalString(handle->device->uuid, uuid, length);
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  return d ? copyOptionalString(d->name, name, length) : NVML_ERROR_NOT_SUPPORTED;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial, unsigned int length) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  return d ? copyOptionalString(d->serial, serial, length) : NVML_ERROR_NOT_SUPPORTED;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  if (!d || !d->pciBusId) return NVML_ERROR_NOT_SUPPORTED;
  return fillPciInfo(*d->pciBusId, pci);
}

// The plain "unsigned field of a physical GPU" entry points.
#define FAKE_UNSIGNED_GETTER(function, field)                                     \
  FAKE_NVML_API nvmlReturn_t function(nvmlDevice_t device, unsigned int* value) { \
    FAKE_ENTER();                                                                 \
    return physicalUnsigned(device, &FakeDevice::field, value);                   \
  }

FAKE_UNSIGNED_GETTER(nvmlDeviceGetArchitecture, architecture)
FAKE_UNSIGNED_GETTER(nvmlDeviceGetMemoryBusWidth, memoryBusWidthBits)
FAKE_UNSIGNED_GETTER(nvmlDeviceGetCurrPcieLinkGeneration, pcieCurrentGen)
FAKE_UNSIGNED_GETTER(nvmlDeviceGetMaxPcieLinkGeneration, pcieMaxGen)
FAKE_UNSIGNED_GETTER(nvmlDeviceGetCurrPcieLinkWidth, pcieCurrentWidth)
FAKE_UNSIGNED_GETTER(nvmlDeviceGetMaxPcieLinkWidth, pcieMaxWidth)
FAKE_UNSIGNED_GETTER(nvmlDeviceGetNumaNodeId, numaNode)

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
  if (memory->version != kNvmlMemoryV2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (!d || !d->memoryTotalBytes) return NVML_ERROR_NOT_SUPPORTED;
  memory->total = *d->memoryTotalBytes;
  memory->reserved = d->memoryReservedBytes.value_or(0);
  memory->used = d->memoryUsedBytes.value_or(0);
  memory->free = memory->total - memory->used - memory->reserved;
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
  if (!d || !d->memoryTotalBytes) return NVML_ERROR_NOT_SUPPORTED;
  memory->total = *d->memoryTotalBytes;
  memory->used = d->memoryUsedBytes.value_or(0) + d->memoryReservedBytes.value_or(0);
  memory->free = memory->total - memory->used;
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t* bar1) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  if (!bar1) return NVML_ERROR_INVALID_ARGUMENT;
  if (!d || !d->bar1TotalBytes) return NVML_ERROR_NOT_SUPPORTED;
  bar1->bar1Total = *d->bar1TotalBytes;
  bar1->bar1Used = d->bar1UsedBytes.value_or(0);
  bar1->bar1Free = bar1->bar1Total - bar1->bar1Used;
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* mhz) {
  FAKE_ENTER();
  if (type == NVML_CLOCK_SM) return physicalUnsigned(device, &FakeDevice::maxSmClockMHz, mhz);
  if (type == NVML_CLOCK_MEM) return physicalUnsigned(device, &FakeDevice::maxMemoryClockMHz, mhz);
  return NVML_ERROR_NOT_SUPPORTED;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t device, unsigned int cpuSetSize, unsigned long* cpuSet) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  if (!cpuSet) return NVML_ERROR_INVALID_ARGUMENT;
  if (!d || !d->cpuAffinity) return NVML_ERROR_NOT_SUPPORTED;
  constexpr unsigned kBits = sizeof(unsigned long) * CHAR_BIT;
  for (unsigned i = 0; i < cpuSetSize; ++i) cpuSet[i] = 0;
  for (unsigned cpu : *d->cpuAffinity)
    if (cpu / kBits < cpuSetSize) cpuSet[cpu / kBits] |= 1UL << (cpu % kBits);
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t* active) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  if (!active) return NVML_ERROR_INVALID_ARGUMENT;
  if (!d || d->nvlinks.empty()) return NVML_ERROR_NOT_SUPPORTED;
  if (link >= NVML_NVLINK_MAX_LINKS) return NVML_ERROR_INVALID_ARGUMENT;
  *active = NVML_FEATURE_DISABLED;
  for (const auto& entry : d->nvlinks)
    if (entry.first == link) *active = NVML_FEATURE_ENABLED;
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t* pci) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  if (!d) return NVML_ERROR_NOT_SUPPORTED;
  for (const auto& entry : d->nvlinks)
    if (entry.first == link) return fillPciInfo(entry.second, pci);
  return NVML_ERROR_INVALID_ARGUMENT;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  if (!d || !d->migMode) return NVML_ERROR_NOT_SUPPORTED;
  // A100/H100 cap at 7 MIG devices; a scenario may describe more.
  *count = std::max<unsigned>(7, static_cast<unsigned>(d->migDevices().size()));
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t* migDevice) {
  FAKE_ENTER();
  FakeDevice* d = physical(device);
  if (!migDevice || !d) return NVML_ERROR_INVALID_ARGUMENT;
  if (!d->migMode || d->migMode->first != NVML_DEVICE_MIG_ENABLE) return NVML_ERROR_INVALID_ARGUMENT;
  auto migs = d->migDevices();
  if (index >= migs.size()) return NVML_ERROR_NOT_FOUND;
  *migDevice = toDevice(&migs[index]->handle);
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) {
  FAKE_ENTER();
  FakeHandle* handle = handleOf(device);
  if (!id || !handle || !handle->mig) return NVML_ERROR_INVALID_ARGUMENT;
  *id = handle->mig->gpuInstance->id;
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  FAKE_ENTER();
  FakeHandle* handle = handleOf(device);
  if (!id || !handle || !handle->mig) return NVML_ERROR_INVALID_ARGUMENT;
  *id = handle->mig->id;
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t* attributes) {
  FAKE_ENTER();
  FakeHandle* handle = handleOf(device);
  if (!attributes || !handle) return NVML_ERROR_INVALID_ARGUMENT;
  if (!handle->mig) return NVML_ERROR_NOT_SUPPORTED;
  const FakeComputeInstance& ci = *handle->mig;
  const FakeProfile& profile = *ci.gpuInstance->profile;
  *attributes = nvmlDeviceAttributes_t{};
  attributes->multiprocessorCount = ci.multiprocessorCount;
  attributes->sharedCopyEngineCount = profile.copyEngineCount;
  attributes->gpuInstanceSliceCount = profile.sliceCount;
  attributes->computeInstanceSliceCount = ci.sliceCount;
  attributes->memorySizeMB = profile.memorySizeMB;
  return NVML_SUCCESS;
}
