// Hardware counters around the traffic kernels: CUPTI's Range Profiler API
// (CUDA 12.6+; Hopper has no legacy Event API), with libcupti loaded at run
// time so that the probe starts where CUPTI is absent. Every failure to count
// is a ProbeFailure: `unsupported` (no library, profiling restricted to
// administrators, a device CUPTI cannot profile, AMD) with the reason, never
// a made-up number.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace topod::probe {

// One profiled kernel: its range name (CUPTI's) and one value per metric, in request order.
struct CounterRange {
  std::string name;
  std::vector<double> values;
};

class TrafficCounters {
 public:
  // Loads CUPTI and builds the configuration for `metrics` on device 0; throws unsupported with the reason.
  explicit TrafficCounters(const std::vector<std::string>& metrics);
  ~TrafficCounters();
  TrafficCounters(const TrafficCounters&) = delete;
  TrafficCounters& operator=(const TrafficCounters&) = delete;

  // Runs `launches` once under the profiler, each kernel it launches its own range (auto range,
  // kernel replay: CUPTI replays a kernel when the metrics need more than one pass); `launches`
  // must launch at most maxRanges kernels and wait for them.
  std::vector<CounterRange> measure(const std::function<void()>& launches, size_t maxRanges);

  size_t passes() const;               // replay passes the metrics need
  const std::string& library() const;  // the libcupti that was loaded
  const std::string& chip() const;     // CUPTI's chip name (e.g. GH100)

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace topod::probe
