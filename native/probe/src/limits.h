// The request-validation rules of the probe protocol. The one list of rules,
// with their order (envelope, device-free fields, device limits, memory,
// capability), is the comment block at the top of server/protocol/validate.ts:
// the simulated GPU applies the same rules, and
// test/integration/probe/validation-contract.test.ts compares the two. Change
// a limit there and here together.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "chase-types.h"
#include "probe-error.h"
#include "runtime.h"

namespace topod::probe::limits {

constexpr uint64_t kMaxArrayBytes = uint64_t{1} << 52;
// Every timed load's latency is buffered in shared memory (samples_shared_bytes).
constexpr uint64_t kMaxSamples = 8192;
constexpr uint64_t kMaxCalibrateSamples = 1'000'000;
constexpr uint64_t kMaxSeed = 0xffffffffull;
constexpr uint64_t kMaxBandwidthBlocks = uint64_t{1} << 20;
constexpr uint64_t kMaxRepetitions = 1000;
// bandwidth: passes over the array inside one launch, and the bytes one launch may stream (arrayBytes × passes).
constexpr uint64_t kMaxBandwidthPasses = 4096;
constexpr uint64_t kMaxBandwidthLaunchBytes = uint64_t{1} << 40;
constexpr uint64_t kConstantTableBytes = uint64_t{kConstantChainElems} * 4;
constexpr uint64_t kMaxChainBytes = (uint64_t{1} << 34) - 4;  // element indices are 32-bit
constexpr uint64_t kMaxTextureElems = uint64_t{1} << 27;
// l2.partition: 512 KiB at a 256 B stride (2048 chunks, the L2's homing unit) unless asked otherwise;
// one latency per chunk is buffered in shared memory, so chunks are bounded by kMaxSamples.
constexpr uint64_t kDefaultPartitionArrayBytes = uint64_t{512} << 10;
constexpr uint64_t kDefaultPartitionStrideBytes = 256;
constexpr uint64_t kMaxPartitionStrideBytes = uint64_t{1} << 20;
// l2.farnear: every pass touches each 128 B line, so arrays and strides are whole lines; at most
// 8192 chunks (one latency each buffered in shared memory); 1 or 2 chosen SMs; passes in [2, 16].
constexpr uint64_t kFarnearLineBytes = 128;
constexpr uint64_t kDefaultFarnearStrideBytes = 256;
constexpr uint64_t kMaxFarnearSms = 2;
constexpr uint64_t kDefaultFarnearPasses = 2;
constexpr uint64_t kMaxFarnearPasses = 16;
// l2.persist: whole 128 B lines too; samples in [1, 8192] (buffered in shared memory).
constexpr uint64_t kPersistLineBytes = 128;
// traffic: cases and counter metrics per request (a metric name is [a-z0-9_.], at most 128 characters),
// the default timed repetitions, and the L2 flush buffer around every case (a multiple of the L2's size).
constexpr uint64_t kMaxTrafficCases = 256;
constexpr uint64_t kMaxTrafficMetrics = 16;
constexpr uint64_t kMaxTrafficMetricChars = 128;
constexpr uint64_t kDefaultTrafficRepetitions = 3;
constexpr uint64_t kTrafficFlushL2Multiple = 4;

// The chain facts the space, memory and capability rules look at.
struct ChainSize {
  Space space;
  uint64_t arrayBytes;
};

inline uint64_t shared_limit_bytes(const hipDeviceProp_t& p) {
  const size_t optin = compat::shared_mem_per_block_optin(p);
  return optin > 0 ? optin : p.sharedMemPerBlock;
}

inline uint64_t chaser_shared_bytes(const ChainSize& c, uint64_t samples) {
  return samples_shared_bytes(samples) + (c.space == Space::Shared ? c.arrayBytes : 0);
}

inline void bad_request(const std::string& message) { throw ProbeFailure(ErrorCode::BadRequest, message); }

// Rule 3 for memory spaces: constant arrays together, each shared array, and one block's shared need.
inline void check_space_limits(const std::vector<ChainSize>& chains, uint64_t blockSharedBytes, const hipDeviceProp_t& p) {
  const uint64_t constantLimit = std::min<uint64_t>(p.totalConstMem, kConstantTableBytes);
  uint64_t constantBytes = 0;
  for (const ChainSize& c : chains)
    if (c.space == Space::Constant) constantBytes += c.arrayBytes;
  if (constantBytes > constantLimit)
    bad_request("constant-space arrays of " + std::to_string(constantBytes) + " bytes exceed the constant limit of " +
                std::to_string(constantLimit) + " bytes");
  const uint64_t sharedLimit = shared_limit_bytes(p);
  for (const ChainSize& c : chains) {
    if (c.space == Space::Shared && c.arrayBytes > sharedLimit)
      bad_request("args.arrayBytes (" + std::to_string(c.arrayBytes) + ") exceeds the shared memory limit of " +
                  std::to_string(sharedLimit) + " bytes");
  }
  if (blockSharedBytes > sharedLimit)
    bad_request("the chase needs " + std::to_string(blockSharedBytes) +
                " bytes of shared memory (samples and shared-space arrays); a block may use " + std::to_string(sharedLimit));
}

// Rules 4 and 5 for chains (ensure_fits keeps kRuntimeMarginBytes free): out_of_memory before
// unsupported, so an array larger than the device is out_of_memory whatever its space.
inline void check_chains_fit(const std::vector<ChainSize>& chains, const char* what) {
  uint64_t total = 0;
  for (const ChainSize& c : chains) total += c.arrayBytes;
  ensure_fits(total, what);
  for (const ChainSize& c : chains) {
    if (c.arrayBytes > kMaxChainBytes)
      throw ProbeFailure(ErrorCode::Unsupported, "chains index with 32 bits: at most " + std::to_string(kMaxChainBytes) + " bytes each");
    if (c.space != Space::Texture) continue;
    uint64_t maxTexels = kMaxTextureElems;
    int runtimeTexels = 0;
    if (hipDeviceGetAttribute(&runtimeTexels, hipDeviceAttributeMaxTexture1DLinear, 0) == hipSuccess && runtimeTexels > 0)
      maxTexels = std::min<uint64_t>(maxTexels, static_cast<uint64_t>(runtimeTexels));
    if (c.arrayBytes / 4 > maxTexels)
      throw ProbeFailure(ErrorCode::Unsupported, "a linear texture holds at most " + std::to_string(maxTexels) + " elements");
  }
}

}  // namespace topod::probe::limits
