// Fine-grained pointer chase (thesis §4): single, batched (one chaser per SM)
// and paired chasers. Returns raw per-load latencies in SM cycles.
#pragma once

#include <cstdint>
#include <vector>

#include "chase-types.h"

namespace topod::probe {

struct ChaseTiming {
  bool warmup;           // walk one full lap untimed first
  uint32_t samples;      // timed loads recorded
  uint64_t budgetNs;     // device-side deadline for untimed walks and spins
  uint32_t sharedLimitBytes;  // dynamic shared memory a block may opt into
  uint32_t multiprocessors;
};

struct ChaseRun {
  uint32_t smId;
  std::vector<uint32_t> latenciesCycles;
};

// Runs each chaser on its own SM, all in one launch (relaunching for any
// chaser left without an SM). With targetSm >= 0 there must be exactly one
// chaser; it runs on that SM when a block lands there, else on any SM.
std::vector<ChaseRun> run_chasers(const std::vector<ChaserView>& chasers, const ChaseTiming& timing, int targetSm);

struct PairPlacementSpec {
  bool sameSm;
  uint32_t firstWarp, firstLane, secondWarp, secondLane;
};

struct PairRun {
  uint32_t firstSmId, secondSmId;
  std::vector<uint32_t> firstLatenciesCycles, secondLatenciesCycles;
};

PairRun run_pair(const ChaserView& first, const ChaserView& second, const PairPlacementSpec& placement, const ChaseTiming& timing);

// Copies `elems` chain elements from device memory into the constant table at `offsetElems`.
void upload_constant_chain(const uint32_t* deviceChain, uint32_t elems, uint32_t offsetElems);

// Dynamic shared memory a chaser needs: its latencies and sink, plus its chain when it lives in shared memory.
inline uint64_t chaser_shared_bytes(const ChaserView& c, uint32_t samples) {
  return samples_shared_bytes(samples) + (c.space == Space::Shared ? uint64_t{c.elems} * 4 : 0);
}

}  // namespace topod::probe
