// Fine-grained pointer chase (thesis §4): single, batched (one chaser per SM)
// and paired chasers. Returns raw per-load latencies in SM cycles.
#pragma once

#include <cstdint>
#include <vector>

#include "chase-types.h"

namespace topod::probe {

struct ChaseTiming {
  bool warmup;                // walk one full lap untimed first
  uint32_t samples;           // timed loads recorded
  uint64_t budgetNs;          // device-side deadline for untimed walks and spins
  uint32_t sharedLimitBytes;  // dynamic shared memory a block may opt into
  uint32_t multiprocessors;
};

// How a chase is launched (protocol.ts ChaseLaunchArgs).
struct LaunchSettings {
  int carveoutPercent = -1;              // L1/shared carveout preference; -1: 0, or 100 when a chain lives in shared memory
  uint64_t flushBytes = 0;               // stream this many bytes through the L2 after the chains are built (0: no flush)
  uint32_t l2FetchGranularityBytes = 0;  // cudaLimitMaxL2FetchGranularity for the launch (0: the limit in force)
};

// What a chase was launched with (protocol.ts ChaseLaunchInfo).
struct LaunchInfo {
  uint32_t carveoutPercent;
  uint64_t sharedBytesPerBlock;  // dynamic + the kernel's static shared memory
  bool flushedL2;
  uint32_t l2FetchGranularityBytes;  // 0 when the limit in force was left alone
};

struct ChaseRun {
  uint32_t smId;
  std::vector<uint32_t> latenciesCycles;
};

struct ChaseOutcome {
  std::vector<ChaseRun> runs;  // one per chaser, in order
  LaunchInfo launch;
};

// Runs each chaser on its own SM, all in one launch (relaunching for any
// chaser left without an SM). With targetSm >= 0 there must be exactly one
// chaser; it runs on that SM when a block lands there, else on any SM.
// A warm-up lap is walked by every thread of the chaser's block, the timed
// walk by its thread 0 alone.
ChaseOutcome run_chasers(const std::vector<ChaserView>& chasers, const ChaseTiming& timing, int targetSm, const LaunchSettings& launch);

struct ConsumerSelfTestRun {
  uint32_t smId;
  std::vector<uint32_t> consumedLatenciesCycles, unconsumedLatenciesCycles;
  LaunchInfo launch;
};

// selftest.consumer: one chaser placed as run_chasers places it, walked warm
// (timing.warmup) and then timed twice in the same launch: `samples` loads
// whose stop clock waits for the loaded value (the walk every chase op
// times), then the next `samples` loads of the chain with a stop clock that
// does not wait.
ConsumerSelfTestRun run_consumer_selftest(const ChaserView& chaser, const ChaseTiming& timing, int targetSm, const LaunchSettings& launch);

struct PairPlacementSpec {
  bool sameSm;
  uint32_t firstWarp, firstLane, secondWarp, secondLane;
  // different-sm on chosen SMs (args.smIds): a grid of gridBlocks blocks, the
  // first block on firstSm and the first on secondSm chase, the rest exit.
  bool chosenSms = false;
  uint32_t firstSm = 0, secondSm = 0, gridBlocks = 2;
};

struct PairRun {
  uint32_t firstSmId, secondSmId;
  std::vector<uint32_t> firstLatenciesCycles, secondLatenciesCycles;
  LaunchInfo launch;
};

// The pair takes neither an L2 flush nor a fetch granularity (only launch.carveoutPercent counts): its step 1 is what fills the caches.
PairRun run_pair(const ChaserView& first, const ChaserView& second, const PairPlacementSpec& placement, const ChaseTiming& timing,
                 const LaunchSettings& launch);

// Copies `elems` chain elements from device memory into the constant table at `offsetElems`.
void upload_constant_chain(const uint32_t* deviceChain, uint32_t elems, uint32_t offsetElems);

// Dynamic shared memory a chaser needs: its latencies and sink, plus its chain when it lives in shared memory.
inline uint64_t chaser_shared_bytes(const ChaserView& c, uint32_t samples) {
  return samples_shared_bytes(samples) + (c.space == Space::Shared ? uint64_t{c.elems} * 4 : 0);
}

}  // namespace topod::probe
