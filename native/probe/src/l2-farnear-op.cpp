// l2.farnear: argument validation and result shape; the kernel lives in
// l2-farnear.cu. Rules: the list at the top of server/protocol/validate.ts
// (the simulated GPU applies the same), numbers in limits.h.
#include <algorithm>
#include <string>

#include "args.h"
#include "l2-farnear.h"
#include "limits.h"
#include "registry.h"
#include "runtime.h"
#include "sm-latencies-json.h"

namespace topod::probe {

namespace {

struct FarnearRequest {
  FarnearSpec spec;
  uint32_t blocks;
  uint32_t sharedLimitBytes;
};

FarnearRequest validate_farnear(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  FarnearSpec s{};
  const json::Value& ids = a.array("smIds");
  if (ids.as_array().empty() || ids.as_array().size() > limits::kMaxFarnearSms) a.fail("smIds", "an array of 1 to 2 SM ids");
  for (const json::Value& id : ids.as_array()) {
    const uint32_t sm = static_cast<uint32_t>(a.checked_integer(id, "smIds", 0, 0xffffffffull));
    if (std::find(s.smIds.begin(), s.smIds.end(), sm) != s.smIds.end()) a.fail("smIds", "distinct SM ids");
    s.smIds.push_back(sm);
  }
  const uint64_t line = limits::kFarnearLineBytes;
  s.arrayBytes = a.integer("arrayBytes", line, limits::kMaxArrayBytes);
  if (s.arrayBytes % line) a.fail("arrayBytes", "a multiple of " + std::to_string(line));
  s.strideBytes = static_cast<uint32_t>(a.integer_or("strideBytes", limits::kDefaultFarnearStrideBytes, line,
                                                     std::min<uint64_t>(s.arrayBytes, limits::kMaxPartitionStrideBytes)));
  if (s.strideBytes % line) a.fail("strideBytes", "a multiple of " + std::to_string(line));
  const uint64_t chunks = s.arrayBytes / s.strideBytes;
  if (chunks > limits::kMaxSamples)
    a.fail("arrayBytes",
           "at most " + std::to_string(limits::kMaxSamples) + " strides (one latency per chunk is buffered in shared memory)");
  s.chunks = static_cast<uint32_t>(chunks);
  s.passes = static_cast<uint32_t>(a.integer_or("passes", limits::kDefaultFarnearPasses, 2, limits::kMaxFarnearPasses));
  s.shared = a.boolean("shared");
  const hipDeviceProp_t& p = ctx.device();
  for (uint32_t sm : s.smIds)
    if (sm >= static_cast<uint32_t>(p.multiProcessorCount))
      limits::bad_request("args.smIds must hold SM ids in [0, " + std::to_string(p.multiProcessorCount - 1) + "] (got " +
                          std::to_string(sm) + ")");
  ensure_fits(s.shared ? s.arrayBytes : s.arrayBytes * s.smIds.size(), "args.arrayBytes");
  return {s, static_cast<uint32_t>(p.multiProcessorCount), static_cast<uint32_t>(limits::shared_limit_bytes(p))};
}

json::Value run_farnear_op(const FarnearRequest& r, const OpContext& ctx) {
  const json::Value sms = sm_latencies_json(run_l2_farnear(r.spec, r.blocks, r.sharedLimitBytes, ctx.budgetNs));
  json::Value out = json::Value::object();
  out.set("arrayBytes", r.spec.arrayBytes)
      .set("strideBytes", r.spec.strideBytes)
      .set("passes", r.spec.passes)
      .set("shared", r.spec.shared)
      .set("sms", sms);
  return out;
}

}  // namespace

void register_l2_farnear(Registry& r) { r.add<FarnearRequest>("l2.farnear", validate_farnear, run_farnear_op); }

}  // namespace topod::probe
