#include "snapshot-reader.h"

#include <chrono>

#include "device-read.h"
#include "field-log.h"
#include "nvml-return.h"
#include "pair-reader.h"
#include "session.h"

namespace topod::nvml {

namespace {

double microsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

Snapshot readOnce(const Library& library, std::chrono::milliseconds staticMaxAge) {
  const Api& api = library.api();
  auto start = std::chrono::steady_clock::now();
  Snapshot snapshot;
  FieldLog log(snapshot.degraded);
  char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (log.check(invoke(api.systemGetDriverVersion, driver, unsigned{sizeof driver}), "driverVersion"))
    snapshot.driverVersion = fromBuffer(driver, sizeof driver);
  int cuda = 0;
  if (log.check(invoke(api.systemGetCudaDriverVersion, &cuda), "cudaDriverVersion")) snapshot.cudaDriverVersion = cuda;
  unsigned count = 0;
  nvmlReturn_t code = api.deviceGetCount(&count);
  if (isSessionLost(code)) throw SessionLost{code};
  if (code != NVML_SUCCESS)
    throw ReadFailed{Outcome::failure(returnFullName(code), "read", "nvmlDeviceGetCount failed: " + returnFullName(code))};
  snapshot.deviceCount = count;
  StaticPolicy policy{{library.loadCount(), snapshot.driverVersion, std::nullopt, std::nullopt}, staticMaxAge, start};
  StaticCache& cache = StaticCache::instance();
  std::vector<std::string> present;
  std::vector<PairInput> handles;
  for (unsigned index = 0; index < count; ++index) {
    auto deviceStart = std::chrono::steady_clock::now();
    DeviceState device;
    device.index = index;
    nvmlDevice_t handle = nullptr;
    FieldLog deviceLog(device.degraded);
    if (deviceLog.check(api.deviceGetHandleByIndex(index, &handle), "handle")) readDevice(api, handle, policy, cache, device);
    if (device.uuid) present.push_back(*device.uuid);
    if (handle) handles.push_back(PairInput{index, handle, device.uuid});
    device.readMicros = microsSince(deviceStart);
    snapshot.devices.push_back(std::move(device));
  }
  cache.retainOnly(present);
  snapshot.pairs = readPairs(api, handles, policy);
  snapshot.readMicros = microsSince(start);
  return snapshot;
}

}  // namespace

ReadResult readSnapshot(const ReadOptions& options) {
  ReadResult result;
  result.outcome = readInSession(
      options.libraryPath, [&](const Library& library) { result.snapshot = readOnce(library, options.staticMaxAge); },
      [&](const Library& library) {
        result.snapshot.libraryPath = library.path();
        result.snapshot.reinitCount = library.reinitCount();
      });
  return result;
}

Outcome openSession(const std::string& libraryPath) {
  Library& library = Library::instance();
  std::lock_guard<std::mutex> lock(library.mutex());
  return library.acquire(libraryPath);
}

void closeSession() {
  Library& library = Library::instance();
  std::lock_guard<std::mutex> lock(library.mutex());
  library.release();
}

}  // namespace topod::nvml
