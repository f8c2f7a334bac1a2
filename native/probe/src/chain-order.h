// The order a pointer chase visits its nodes (thesis §4: sequential chains
// expose line sizes and prefetching, random chains defeat the prefetcher).
// Pure host code, unit-tested without a GPU.
#pragma once

#include <cstdint>
#include <vector>

namespace topod::probe {

enum class ChasePattern { Sequential, Random };

// successor[i] is the node visited after node i. Both patterns form one cycle
// through all `nodes` nodes, so a walk from node 0 sees every node before it
// repeats. Random uses Sattolo's algorithm over a seeded splitmix64 stream, so
// a seed reproduces the same chain on every machine.
inline std::vector<uint32_t> chain_successors(uint32_t nodes, ChasePattern pattern, uint64_t seed) {
  std::vector<uint32_t> next(nodes);
  if (nodes == 0) return next;
  if (pattern == ChasePattern::Sequential) {
    for (uint32_t i = 0; i < nodes; ++i) next[i] = (i + 1 == nodes) ? 0 : i + 1;
    return next;
  }
  std::vector<uint32_t> order(nodes);
  for (uint32_t i = 0; i < nodes; ++i) order[i] = i;
  uint64_t state = seed;
  auto random = [&state]() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  for (uint32_t i = nodes - 1; i > 0; --i) {
    const uint32_t j = static_cast<uint32_t>(random() % i);  // j < i: a single cycle
    const uint32_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  // order is a cyclic permutation as a mapping i -> order[i].
  for (uint32_t i = 0; i < nodes; ++i) next[i] = order[i];
  return next;
}

}  // namespace topod::probe
