// Types shared by the chase host code and kernels.
#pragma once

#include <cstdint>

#include "hip-compat.h"

namespace topod::probe {

// Order matches MEMORY_SPACES in server/protocol/ops.ts.
// Global: a plain ld.global, no cache operator: whatever the compiler and GPU do by default (issue 9: does L1 cache it?).
enum class Space : uint32_t { GlobalCa, GlobalCg, Readonly, Texture, Constant, Shared, Global };
#define TOPOD_SPACE_NAMES "global.ca", "global.cg", "readonly", "texture", "constant", "shared", "global"

// The constant bank a __constant__ array may use: 64 KiB.
constexpr uint32_t kConstantChainElems = 16384;

// A chaser's shared memory besides a shared-space chain (pchase.cu): a latency
// word per timed sample and one sink word that every timed load's index is
// stored to. The per-sample share is what an L1 size sweep's samples take from
// the L1 through the carveout, so it is kept to the latency alone.
constexpr uint32_t kSinkWords = 1;
constexpr uint64_t kSampleSharedBytes = 4;
inline constexpr uint64_t samples_shared_bytes(uint64_t samples) { return samples * kSampleSharedBytes + kSinkWords * 4; }

// One chain as a kernel sees it. Element values are the index of the next
// element: within the chaser's own buffer (global, readonly, texture), within
// the shared constant table (constant, offset by its slot), or within the
// chaser's copy in shared memory (shared).
struct ChaserView {
  Space space;
  uint32_t start;          // first element index of the walk
  uint32_t nodes;          // loads in one full lap
  uint32_t strideElems;    // node k sits at element start + k * strideElems (in index order, not walk order)
  uint32_t elems;          // chain length in 4-byte elements
  const uint32_t* global;  // device buffer (also the source of the shared-memory copy)
  hipTextureObject_t tex;  // texture object over `global` (texture space only)
};

}  // namespace topod::probe
