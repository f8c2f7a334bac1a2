// Builds pointer-chase chains on the device and owns them for one operation.
#pragma once

#include <memory>
#include <vector>

#include "chain-order.h"
#include "chase-types.h"
#include "runtime.h"

namespace topod::probe {

struct ChainSpec {
  Space space;
  uint64_t arrayBytes;
  uint64_t strideBytes;
  ChasePattern pattern;
  uint64_t seed;
};

// Owns every buffer and texture object of an operation's chains; the
// destructor frees them (so does an exception thrown half-way).
class ChainSet {
 public:
  ChainSet() = default;
  ChainSet(const ChainSet&) = delete;
  ChainSet& operator=(const ChainSet&) = delete;
  ~ChainSet();

  ChaserView add(const ChainSpec& spec);

 private:
  std::vector<DeviceBuffer<uint32_t>> buffers_;
  std::vector<hipTextureObject_t> textures_;
  uint32_t constantUsedElems_ = 0;
};

}  // namespace topod::probe
