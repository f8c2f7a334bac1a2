#include "snapshot-reader.h"

#include <chrono>

#include "device-read.h"
#include "field-log.h"
#include "nvml-return.h"
#include "pair-reader.h"

namespace topod::nvml {

namespace {

// A read that meets LIB_RM_VERSION_MISMATCH (driver upgraded) or
// UNINITIALIZED (driver reloaded) tears NVML down, loads it again and starts
// over; twice is enough for a driver that has finished changing.
constexpr int kReadAttempts = 3;

/** deviceGetCount failed with a code that no reload fixes. */
struct CountFailed {
  nvmlReturn_t code;
};

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
  if (code != NVML_SUCCESS) throw CountFailed{code};
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
    if (deviceLog.check(api.deviceGetHandleByIndex(index, &handle), "handle"))
      readDevice(api, handle, policy, cache, device);
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
  Library& library = Library::instance();
  std::lock_guard<std::mutex> lock(library.mutex());
  ReadResult result;
  result.outcome = library.acquire(options.libraryPath);
  result.snapshot.libraryPath = library.path();
  if (!result.outcome.ok) return result;
  for (int attempt = 1;; ++attempt) {
    try {
      result.snapshot = readOnce(library, options.staticMaxAge);
      break;
    } catch (const SessionLost& lost) {
      if (attempt >= kReadAttempts) {
        result.outcome = Outcome::failure(returnFullName(lost.code), "read",
                                          "NVML session lost and not recovered: " + returnFullName(lost.code));
        break;
      }
      Outcome reloaded = library.reload();
      if (!reloaded.ok) {
        result.outcome = reloaded;
        break;
      }
    } catch (const CountFailed& failed) {
      result.outcome = Outcome::failure(returnFullName(failed.code), "read",
                                        "nvmlDeviceGetCount failed: " + returnFullName(failed.code));
      break;
    }
  }
  result.snapshot.libraryPath = library.path();
  result.snapshot.reinitCount = library.reinitCount();
  library.release();
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
