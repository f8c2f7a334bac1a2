// bandwidth: argument validation and result shape; the kernels live in bandwidth.cu.
#include "args.h"
#include "bandwidth.h"
#include "limits.h"
#include "registry.h"
#include "runtime.h"

namespace topod::probe {

namespace {

// Rules: server/gpu/sim/validate.ts (top comment); numbers in limits.h.
BandwidthSpec validate_bandwidth(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  BandwidthSpec s{};
  s.mode = a.one_of("mode", {"read", "write"}) == 0 ? BandwidthMode::Read : BandwidthMode::Write;
  s.arrayBytes = a.integer("arrayBytes", 16, limits::kMaxArrayBytes);
  if (s.arrayBytes % 16) a.fail("arrayBytes", "a multiple of 16 (128-bit accesses)");
  s.blocks = static_cast<uint32_t>(a.integer("blocks", 1, limits::kMaxBandwidthBlocks));
  s.repetitions = static_cast<uint32_t>(a.integer("repetitions", 1, limits::kMaxRepetitions));
  const hipDeviceProp_t& p = ctx.device();
  s.threadsPerBlock = static_cast<uint32_t>(a.integer("threadsPerBlock", 1, static_cast<uint64_t>(p.maxThreadsPerBlock)));
  ensure_fits(s.arrayBytes + uint64_t{s.blocks} * s.threadsPerBlock * 4, "args.arrayBytes");
  return s;
}

json::Value run_bandwidth_op(const BandwidthSpec& s, const OpContext&) {
  json::Value seconds = json::Value::array();
  for (double x : run_bandwidth(s)) seconds.push(x);
  json::Value out = json::Value::object();
  out.set("bytesPerRepetition", s.arrayBytes).set("secondsPerRepetition", seconds);
  return out;
}

}  // namespace

void register_bandwidth(Registry& r) { r.add<BandwidthSpec>("bandwidth", validate_bandwidth, run_bandwidth_op); }

}  // namespace topod::probe
