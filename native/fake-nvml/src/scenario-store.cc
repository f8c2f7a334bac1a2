// Scenario file watching, init reference counting and failure injection.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "scenario.h"

namespace topod::fake {

namespace {

struct FileStamp {
  std::string path;
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = -1;
  long long mtimeNs = -1;
  bool operator==(const FileStamp& o) const {
    return path == o.path && device == o.device && inode == o.inode && size == o.size && mtimeNs == o.mtimeNs;
  }
};

struct Store {
  std::mutex mutex;
  // Every scenario ever loaded stays alive: the addon may still hold handles
  // into an older one while a test rewrites the file.
  std::vector<std::unique_ptr<Scenario>> history;
  Scenario* active = nullptr;
  FileStamp stamp;
  nvmlReturn_t loadError = NVML_ERROR_DRIVER_NOT_LOADED;  // until a scenario loads
  unsigned pendingMismatch = 0;
  int initCount = 0;
};

Store& store() {
  static Store s;
  return s;
}

FileStamp stampOf(const std::string& path) {
  FileStamp stamp;
  stamp.path = path;
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return stamp;
  stamp.device = st.st_dev;
  stamp.inode = st.st_ino;
  stamp.size = st.st_size;
  stamp.mtimeNs = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  return stamp;
}

// One stat per call: cheap, and it lets tests change MIG state live by
// rewriting the file between two reads.
void refresh(Store& s) {
  const char* env = std::getenv("TOPOD_FAKE_NVML_SCENARIO");
  FileStamp now = stampOf(env ? env : "");
  if (now == s.stamp) return;
  s.stamp = now;
  s.active = nullptr;
  if (now.size < 0) {
    // No scenario: the "no driver" machine.
    s.loadError = NVML_ERROR_DRIVER_NOT_LOADED;
    return;
  }
  std::ifstream in(now.path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  try {
    s.history.push_back(parseScenario(text.str()));
    s.active = s.history.back().get();
    s.loadError = NVML_SUCCESS;
    s.pendingMismatch = s.active->rmVersionMismatch;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake-nvml: scenario %s: %s\n", now.path.c_str(), e.what());
    s.loadError = NVML_ERROR_UNKNOWN;
  }
}

// Opened per call so a test may truncate or delete the log between reads.
void logCall(const Scenario& scenario, const char* function) {
  if (scenario.callLog.empty()) return;
  if (std::FILE* log = std::fopen(scenario.callLog.c_str(), "a")) {
    std::fprintf(log, "%s\n", function);
    std::fclose(log);
  }
}

}  // namespace

Scenario* current() { return store().active; }

nvmlReturn_t enter(const char* function, bool requiresInit) {
  Store& s = store();
  std::unique_lock<std::mutex> lock(s.mutex);
  refresh(s);
  if (!s.active) return s.loadError;
  logCall(*s.active, function);
  if (unsigned delay = s.active->callDelayMicros) {
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::microseconds(delay));
    lock.lock();
    if (!s.active) return s.loadError;
  }
  if (s.pendingMismatch > 0) {
    --s.pendingMismatch;
    return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
  }
  if (requiresInit && s.initCount == 0) return NVML_ERROR_UNINITIALIZED;
  auto failure = s.active->callFailures.find(function);
  return failure == s.active->callFailures.end() ? NVML_SUCCESS : failure->second;
}

nvmlReturn_t initialize() {
  if (nvmlReturn_t code = enter("nvmlInit", false); code != NVML_SUCCESS) return code;
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.active->initFailure != NVML_SUCCESS) return s.active->initFailure;
  ++s.initCount;
  return NVML_SUCCESS;
}

nvmlReturn_t shutdown() {
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.active) logCall(*s.active, "nvmlShutdown");
  if (s.initCount == 0) return NVML_ERROR_UNINITIALIZED;
  --s.initCount;
  return NVML_SUCCESS;
}

}  // namespace topod::fake
