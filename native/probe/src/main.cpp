// topod-probe: JSON lines on stdin -> JSON lines on stdout, logs on stderr.
// Exit codes: 0 at end of input, 3 after a kernel fault, 4 when the watchdog
// killed an operation that overran its deadline, 2 for a bad command line.
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

#include "request-loop.h"
#include "runtime.h"
#include "version.h"

namespace probe = topod::probe;
namespace json = topod::json;

namespace {

std::mutex g_stdoutMutex;

void write_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_stdoutMutex);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

// A host-side deadline per operation: kernels check their own device-side
// deadline, but a hung kernel cannot be interrupted, so past deadline + grace
// the watchdog answers `timeout` itself and ends the process.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::milliseconds limit) : limit_(limit), thread_([this] { loop(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  void arm(json::Value id) {
    std::lock_guard<std::mutex> lock(m_);
    id_ = std::move(id);
    deadline_ = std::chrono::steady_clock::now() + limit_;
    armed_ = true;
  }
  void disarm() {
    std::lock_guard<std::mutex> lock(m_);
    armed_ = false;
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(m_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(100));
      if (armed_ && std::chrono::steady_clock::now() > deadline_) {
        write_line(probe::error_line(id_, probe::ErrorCode::Timeout,
                                     "operation overran the probe's deadline of " + std::to_string(limit_.count()) + " ms"));
        std::fprintf(stderr, "topod-probe: watchdog: operation overran its deadline, exiting\n");
        std::_Exit(4);
      }
    }
  }

  std::chrono::milliseconds limit_;
  std::mutex m_;
  std::condition_variable cv_;
  json::Value id_;
  std::chrono::steady_clock::time_point deadline_{};
  bool armed_ = false;
  bool stop_ = false;
  std::thread thread_;
};

probe::OpContext open_context(uint64_t deadlineMs, const probe::Registry& registry) {
  probe::OpContext ctx;
  ctx.budgetNs = deadlineMs * 1'000'000ull;
  ctx.ops = registry.keys();
  int count = 0;
  const hipError_t err = hipGetDeviceCount(&count);
  if (err != hipSuccess) {
    std::fprintf(stderr, "topod-probe: no GPU runtime: %s\n", hipGetErrorString(err));
    (void)hipGetLastError();
    return ctx;
  }
  ctx.deviceCount = count;
  if (count > 0 && hipGetDeviceProperties(&ctx.prop, 0) != hipSuccess) ctx.deviceCount = 0;
  return ctx;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t deadlineMs = 120000;
  if (const char* env = std::getenv("TOPOD_PROBE_DEADLINE_MS")) deadlineMs = std::strtoull(env, nullptr, 10);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0) {
      std::printf("topod-probe %s (protocol %d, %s)\n", TOPOD_PROBE_VERSION, TOPOD_PROTOCOL_VERSION, TOPOD_VENDOR_NAME);
      return 0;
    }
    if (std::strcmp(argv[i], "--deadline-ms") == 0 && i + 1 < argc) {
      deadlineMs = std::strtoull(argv[++i], nullptr, 10);
      continue;
    }
    std::fprintf(stderr, "usage: topod-probe [--version] [--deadline-ms N]   (requests on stdin, one JSON object a line)\n");
    return 2;
  }
  if (deadlineMs == 0) deadlineMs = 120000;
  const probe::Registry registry = probe::make_registry();
  const probe::OpContext ctx = open_context(deadlineMs, registry);
  std::fprintf(stderr, "topod-probe %s: %d device(s), deadline %llu ms\n", TOPOD_PROBE_VERSION, ctx.deviceCount,
               static_cast<unsigned long long>(deadlineMs));
  // The device-side budget ends first; the watchdog only catches what cannot stop itself.
  Watchdog watchdog(std::chrono::milliseconds(deadlineMs + 5000));

  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    watchdog.arm(probe::request_id(line));
    const probe::Reply reply = probe::handle_request(registry, ctx, line);
    watchdog.disarm();
    write_line(reply.line);
    if (reply.fatal) {
      std::fprintf(stderr, "topod-probe: kernel fault, exiting\n");
      return 3;
    }
  }
  return 0;
}
