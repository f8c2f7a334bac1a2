// Streaming read/write bandwidth with 128-bit accesses, and the device-to-device
// copy reference, timed with events.
#pragma once

#include <cstdint>
#include <vector>

namespace topod::probe {

enum class BandwidthMode { Read, Write };
// Read flavour: default caching (L1 and L2) or .cg (L2 only, for the L2's own rate).
enum class CacheHint { Default, Cg };

struct BandwidthSpec {
  BandwidthMode mode;
  CacheHint cacheHint;  // Cg only with Read
  uint64_t arrayBytes;  // multiple of 16
  uint32_t blocks;
  uint32_t threadsPerBlock;
  uint32_t passes;  // grid-stride passes over the array inside one launch
  uint32_t repetitions;
};

// Seconds per repetition (one launch of `passes` passes each), after one untimed warm-up launch.
std::vector<double> run_bandwidth(const BandwidthSpec& spec);

struct BandwidthCopySpec {
  uint64_t arrayBytes;  // copied per repetition: arrayBytes read and arrayBytes written
  uint32_t repetitions;
};

// Seconds per device-to-device hipMemcpy of arrayBytes, after one untimed warm-up copy.
std::vector<double> run_bandwidth_copy(const BandwidthCopySpec& spec);

}  // namespace topod::probe
