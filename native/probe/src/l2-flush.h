// Pushes a chain out of the L2 before a cold walk (protocol.ts ChaseLaunchArgs
// flushL2). Chains are written by a kernel (and copied to the constant bank)
// right before the walk, so their lines sit dirty in the L2: a walk meant to
// be cold would find them there. Streaming reads of a buffer larger than the
// L2 write those lines back and evict them.
#pragma once

#include <cstdint>

#include "runtime.h"

namespace topod::probe {

class L2Flush {
 public:
  // Allocates and zeroes `bytes` (rounded down to 16) of device memory once; 0 makes flush() do nothing.
  L2Flush(uint64_t bytes, uint32_t multiprocessors);

  // Reads the whole buffer, every SM taking part, and waits for it.
  void flush();

  bool enabled() const { return data_.size() > 0; }

 private:
  DeviceBuffer<uint4> data_;
  DeviceBuffer<uint32_t> sink_;
  uint32_t blocks_;
};

}  // namespace topod::probe
