// traffic: the bytes that really move between the L2 and device memory for
// strided accesses (LLC-memory traffic paper, issue 20). One kernel per
// access pattern, launched between two L2 flushes so that (a) nothing of the
// arrays is in the L2 when the pattern starts and (b) every line it dirtied is
// written back by the second flush, where the counters can see it. The probe
// reports raw counts or times; the bytes per useful byte are the daemon's.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace topod::probe {

// read: v = a[i]; write: c[i] = v; rmw: c[i] = c[i] + 1; vecmul: c[i] = a[i] * b[i] (the paper's kernel).
enum class TrafficPattern { Read, Write, Rmw, VecMul };
// The written array c: fresh (allocated for this case and never written) or written (filled, then flushed).
enum class TrafficTarget { Fresh, Written };

struct TrafficCase {
  TrafficPattern pattern;
  uint32_t elementBytes;    // 4, 8 or 16
  uint64_t strideElements;  // one access every strideElements elements
  TrafficTarget target;
};

// The arrays one traffic request uses: a and b (the read arrays, filled once),
// c (the written array, per case), and the flush buffer.
class TrafficArrays {
 public:
  TrafficArrays(uint64_t footprintBytes, uint64_t flushBytes, uint32_t multiprocessors);
  ~TrafficArrays();
  TrafficArrays(const TrafficArrays&) = delete;
  TrafficArrays& operator=(const TrafficArrays&) = delete;

  // Makes c ready for `target`: a new allocation never written (fresh), or the kept one filled (written).
  void prepare_target(TrafficTarget target);
  // Reads the flush buffer through the L2 (evicting and writing back whatever the L2 held) and waits.
  void flush();
  // Launches one pass of the case's pattern over the arrays (asynchronous; no wait).
  void launch(const TrafficCase& c);

  uint64_t footprintBytes() const { return footprintBytes_; }

 private:
  uint64_t footprintBytes_;
  uint64_t flushBytes_;
  uint32_t multiprocessors_;
  void* a_ = nullptr;
  void* b_ = nullptr;
  void* c_ = nullptr;
  void* flushBuffer_ = nullptr;
  uint32_t* words_ = nullptr;  // [0] a flag that is 0 at run time, [1..] sinks
};

// Accesses one pass of `c` makes over `footprintBytes`.
inline uint64_t traffic_accesses(uint64_t footprintBytes, const TrafficCase& c) {
  const uint64_t elements = footprintBytes / c.elementBytes;
  return (elements + c.strideElements - 1) / c.strideElements;
}

// Seconds of each of `repetitions` pattern launches, timed with events; before each
// (untimed) the target is prepared and the L2 flushed. One untimed warm-up launch first.
std::vector<double> time_traffic_case(TrafficArrays& arrays, const TrafficCase& c, uint32_t repetitions);

}  // namespace topod::probe
