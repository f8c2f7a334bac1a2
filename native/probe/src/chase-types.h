// Types shared by the chase host code and kernels.
#pragma once

#include <cstdint>

#include "hip-compat.h"

namespace topod::probe {

// Order matches MEMORY_SPACES in server/gpu/protocol.ts.
enum class Space : uint32_t { GlobalCa, GlobalCg, Readonly, Texture, Constant, Shared };
#define TOPOD_SPACE_NAMES "global.ca", "global.cg", "readonly", "texture", "constant", "shared"

// The constant bank a __constant__ array may use: 64 KiB.
constexpr uint32_t kConstantChainElems = 16384;

// One chain as a kernel sees it. Element values are the index of the next
// element: within the chaser's own buffer (global, readonly, texture), within
// the shared constant table (constant, offset by its slot), or within the
// chaser's copy in shared memory (shared).
struct ChaserView {
  Space space;
  uint32_t start;        // first element index of the walk
  uint32_t nodes;        // loads in one full lap
  uint32_t elems;        // chain length in 4-byte elements
  const uint32_t* global;  // device buffer (also the source of the shared-memory copy)
  hipTextureObject_t tex;  // texture object over `global` (texture space only)
};

}  // namespace topod::probe
