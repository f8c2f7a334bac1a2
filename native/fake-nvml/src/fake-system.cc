// Fake NVML: library lifetime, system queries and device enumeration.
#include "fake-api.h"

using namespace topod::fake;

FAKE_NVML_API nvmlReturn_t nvmlInit_v2(void) { return initialize(); }

FAKE_NVML_API nvmlReturn_t nvmlShutdown(void) { return shutdown(); }

FAKE_NVML_API nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  FAKE_ENTER();
  return copyString(current()->driverVersion, version, length);
}

FAKE_NVML_API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* cudaDriverVersion) {
  FAKE_ENTER();
  return copyOptional(current()->cudaDriverVersion, cudaDriverVersion);
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* deviceCount) {
  FAKE_ENTER();
  if (!deviceCount) return NVML_ERROR_INVALID_ARGUMENT;
  *deviceCount = static_cast<unsigned>(current()->devices.size());
  return NVML_SUCCESS;
}

FAKE_NVML_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  FAKE_ENTER();
  auto& devices = current()->devices;
  if (!device || index >= devices.size()) return NVML_ERROR_INVALID_ARGUMENT;
  *device = toDevice(&devices[index].handle);
  return NVML_SUCCESS;
}
