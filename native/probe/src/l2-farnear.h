// l2.farnear: what one or two chosen SMs see of the L2 past one partition's
// capacity and of device memory, chunk by chunk. l2.partition answers which
// chunks are near or far for each SM group within one partition's capacity;
// here a chosen SM walks an array larger than that (far-homed lines still hit
// in their home partition, at a cost of their own; near-homed lines come from
// device memory) or larger than the whole L2 (both device-memory classes), and
// in shared mode a second SM of the other group walks the same array between
// the first SM's passes, so the first SM's timed pass shows whether its lines
// survived the second SM's copies (data read by both groups is held twice).
#pragma once

#include <cstdint>
#include <vector>

namespace topod::probe {

struct FarnearSpec {
  std::vector<uint32_t> smIds;  // 1 or 2 SM ids (%smid values), distinct
  uint64_t arrayBytes;
  uint32_t strideBytes;  // one timed load per stride: a chunk
  uint32_t chunks;       // arrayBytes / strideBytes
  uint32_t passes;       // passes - 1 untimed warm passes, then one timed pass
  bool shared;           // one array for all chosen SMs (else one each)
};

struct FarnearRun {
  uint32_t smId;
  std::vector<uint32_t> latenciesCycles;  // by chunk, address order
};

// Every pass touches each 128 B line of the array with one .cg load; on the
// timed pass the first line of each chunk is loaded timed (after the chunk
// before it is done), the rest of the chunk untimed by the whole block. The
// chosen SMs take turns (never two walks at once):
// - private (shared = false): SM 0 does all its passes, then SM 1;
// - shared: every SM does its warm passes in turn, then every SM its timed
//   pass in turn, so SM 0's timed pass follows SM 1's walk of the same lines.
// One block per SM (each takes the shared-memory limit); blocks on other SMs
// exit at once. Throws unsupported when a chosen SM never ran a block.
std::vector<FarnearRun> run_l2_farnear(const FarnearSpec& spec, uint32_t blocks, uint32_t sharedLimitBytes, uint64_t budgetNs);

}  // namespace topod::probe
