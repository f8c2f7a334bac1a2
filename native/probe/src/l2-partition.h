// l2.partition: which L2 partition serves each 256 B chunk, seen from every SM
// at once. The L2 of recent NVIDIA GPUs is two partitions; a chunk is homed in
// one of them by an address hash, and an SM reaches one partition faster than
// the other, so one SM's L2 hits fall in two latency classes. Which chunks are
// near differs between the SM groups wired to each partition.
#pragma once

#include <cstdint>
#include <vector>

namespace topod::probe {

enum class PartitionMode {
  Private,  // every SM chases its own array (disjoint slices of one allocation)
  Shared,   // every SM chases the same array: chunk c is one address for all SMs
};

struct PartitionSpec {
  PartitionMode mode;
  uint64_t arrayBytes;   // one SM's array (private) or the one array (shared)
  uint32_t strideBytes;  // one timed load per stride: a chunk
  uint32_t chunks;       // arrayBytes / strideBytes
};

struct PartitionRun {
  uint32_t smId;
  std::vector<uint32_t> latenciesCycles;  // indexed by chunk (address order), not by the order walked
};

// One launch, one block per SM (every block takes the shared-memory limit).
// Each block's thread 0 walks its chunks; for each it loads the chunk (.cg,
// untimed: this SM's own touch, which leaves the line in the L2 whatever
// other SMs did to it), waits for the value, then times a second .cg load of
// the same address. In shared mode block b starts at chunk b * chunks / blocks
// so the SMs do not queue on one chunk at a time. Blocks in launch order.
std::vector<PartitionRun> run_l2_partition(const PartitionSpec& spec, uint32_t blocks, uint32_t sharedLimitBytes, uint64_t budgetNs);

}  // namespace topod::probe
