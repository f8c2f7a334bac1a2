// bandwidth and bandwidth.copy: argument validation and result shape; the kernels live in bandwidth.cu.
#include "args.h"
#include "bandwidth.h"
#include "limits.h"
#include "registry.h"
#include "runtime.h"

namespace topod::probe {

namespace {

uint64_t array_bytes(const ArgReader& a) {
  const uint64_t bytes = a.integer("arrayBytes", 16, limits::kMaxArrayBytes);
  if (bytes % 16) a.fail("arrayBytes", "a multiple of 16 (128-bit accesses)");
  return bytes;
}

// Rules: server/protocol/validate.ts (top comment); numbers in limits.h.
BandwidthSpec validate_bandwidth(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  BandwidthSpec s{};
  s.mode = a.one_of("mode", {"read", "write"}) == 0 ? BandwidthMode::Read : BandwidthMode::Write;
  s.arrayBytes = array_bytes(a);
  s.blocks = static_cast<uint32_t>(a.integer("blocks", 1, limits::kMaxBandwidthBlocks));
  s.repetitions = static_cast<uint32_t>(a.integer("repetitions", 1, limits::kMaxRepetitions));
  s.passes = static_cast<uint32_t>(a.integer_or("passes", 1, 1, limits::kMaxBandwidthPasses));
  if (s.arrayBytes * s.passes > limits::kMaxBandwidthLaunchBytes)
    a.fail("passes", "such that arrayBytes × passes is at most " + std::to_string(limits::kMaxBandwidthLaunchBytes) + " bytes per launch");
  s.cacheHint = a.one_of_or("cacheHint", 0, {"default", "cg"}) == 0 ? CacheHint::Default : CacheHint::Cg;
  if (s.cacheHint == CacheHint::Cg && s.mode == BandwidthMode::Write) a.fail("cacheHint", "default for mode write (.cg is a load flavour)");
  const hipDeviceProp_t& p = ctx.device();
  s.threadsPerBlock = static_cast<uint32_t>(a.integer("threadsPerBlock", 1, static_cast<uint64_t>(p.maxThreadsPerBlock)));
  ensure_fits(s.arrayBytes + uint64_t{s.blocks} * s.threadsPerBlock * 4, "args.arrayBytes");
  return s;
}

BandwidthCopySpec validate_bandwidth_copy(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  BandwidthCopySpec s{};
  s.arrayBytes = array_bytes(a);
  s.repetitions = static_cast<uint32_t>(a.integer("repetitions", 1, limits::kMaxRepetitions));
  (void)ctx.device();
  ensure_fits(2 * s.arrayBytes, "args.arrayBytes (source and target)");
  return s;
}

json::Value timings(uint64_t bytes, const std::vector<double>& seconds) {
  json::Value out = json::Value::object();
  out.set("bytesPerRepetition", bytes).set("secondsPerRepetition", json::numbers(seconds));
  return out;
}

json::Value run_bandwidth_op(const BandwidthSpec& s, const OpContext&) { return timings(s.arrayBytes * s.passes, run_bandwidth(s)); }

json::Value run_bandwidth_copy_op(const BandwidthCopySpec& s, const OpContext&) { return timings(s.arrayBytes, run_bandwidth_copy(s)); }

}  // namespace

void register_bandwidth(Registry& r) {
  r.add<BandwidthSpec>("bandwidth", validate_bandwidth, run_bandwidth_op);
  r.add<BandwidthCopySpec>("bandwidth.copy", validate_bandwidth_copy, run_bandwidth_copy_op);
}

}  // namespace topod::probe
