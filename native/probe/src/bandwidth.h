// Streaming read/write bandwidth with 128-bit accesses, timed with events.
#pragma once

#include <cstdint>
#include <vector>

namespace topod::probe {

enum class BandwidthMode { Read, Write };

struct BandwidthSpec {
  BandwidthMode mode;
  uint64_t arrayBytes;  // multiple of 16
  uint32_t blocks;
  uint32_t threadsPerBlock;
  uint32_t repetitions;
};

// Seconds per repetition, after one untimed warm-up pass.
std::vector<double> run_bandwidth(const BandwidthSpec& spec);

}  // namespace topod::probe
