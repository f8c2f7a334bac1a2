// l2.persist: what a persisting L2 access-policy window keeps (CUDA 11+,
// sm_80+). An array larger than the L2 is streamed, then a sample of its
// first windowBytes is loaded timed; once without a window, once with a
// persisting window over those bytes (cudaLimitPersistingL2CacheSize set to
// windowBytes). The device's persisting limit is read first and restored on
// every path, and persisting lines are reset afterwards.
#pragma once

#include <cstdint>
#include <vector>

namespace topod::probe {

struct PersistSpec {
  uint64_t arrayBytes;
  uint64_t windowBytes;
  double hitRatio;
  uint32_t samples;  // timed loads, evenly over [0, windowBytes), each at a 128 B line
};

struct PersistRun {
  uint64_t persistingLimitBytes;  // the set-aside the runtime granted (read back)
  std::vector<uint32_t> withoutCycles;
  std::vector<uint32_t> withCycles;
};

// Sample i's offset: floor(i × windowBytes / samples / 128) × 128 bytes.
inline uint64_t persist_sample_offset(const PersistSpec& s, uint32_t i) { return (uint64_t{i} * s.windowBytes / s.samples) / 128 * 128; }

// Throws unsupported where the runtime has no persisting L2 (AMD, MIG, a device whose maximum is 0).
PersistRun run_l2_persist(const PersistSpec& spec, uint32_t streamBlocks, uint64_t budgetNs);

}  // namespace topod::probe
