// Clock calibration: the cost of a clock read, and the SM clock against the global timer.
#pragma once

#include <cstdint>

namespace topod::probe {

struct Calibration {
  double clockReadOverheadCycles;  // median of back-to-back reads
  double smClockHz;
};

Calibration run_calibrate(uint32_t samples, uint64_t spinNs);

}  // namespace topod::probe
