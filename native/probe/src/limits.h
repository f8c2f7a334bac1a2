// The request-validation rules of the probe protocol. The one list of rules,
// with their order (envelope, device-free fields, device limits, memory,
// capability), is the comment block at the top of server/protocol/validate.ts:
// the simulated GPU applies the same rules, and
// test/integration/probe/validation-contract.test.ts compares the two. Change
// a rule there and here together. The numbers are not kept here: they come
// from the protocol's one table (server/protocol/limits.ts) through
// limits.generated.h (`npm run generate:limits`).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "chase-types.h"
#include "limits.generated.h"
#include "probe-error.h"
#include "runtime.h"

namespace topod::probe::limits {

// Where the probe sizes something by the same number, it must agree with the table.
static_assert(kConstantTableBytes == uint64_t{kConstantChainElems} * 4, "the constant table is kConstantChainElems 32-bit elements");
static_assert(kSampleSharedBytes == probe::kSampleSharedBytes && kSinkSharedBytes == uint64_t{kSinkWords} * 4,
              "a chaser's shared memory: samples_shared_bytes");
static_assert(kRuntimeMarginBytes == probe::kRuntimeMarginBytes, "ensure_fits keeps the table's runtime margin");

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
    uint64_t maxTexels = kMaxTextureElements;
    int runtimeTexels = 0;
    if (hipDeviceGetAttribute(&runtimeTexels, hipDeviceAttributeMaxTexture1DLinear, 0) == hipSuccess && runtimeTexels > 0)
      maxTexels = std::min<uint64_t>(maxTexels, static_cast<uint64_t>(runtimeTexels));
    if (c.arrayBytes / 4 > maxTexels)
      throw ProbeFailure(ErrorCode::Unsupported, "a linear texture holds at most " + std::to_string(maxTexels) + " elements");
  }
}

}  // namespace topod::probe::limits
