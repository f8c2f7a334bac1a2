// l2.partition: argument validation and result shape; the kernel lives in
// l2-partition.cu. Rules: the list at the top of server/protocol/validate.ts
// (the simulated GPU applies the same), numbers in limits.h.
#include <algorithm>
#include <string>

#include "args.h"
#include "l2-partition.h"
#include "limits.h"
#include "registry.h"
#include "runtime.h"
#include "sm-latencies-json.h"

namespace topod::probe {

namespace {

struct PartitionRequest {
  PartitionSpec spec;
  uint32_t blocks;
  uint32_t sharedLimitBytes;
};

PartitionRequest validate_partition(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  PartitionSpec s{};
  s.mode = a.one_of("mode", {"private", "shared"}) == 0 ? PartitionMode::Private : PartitionMode::Shared;
  s.arrayBytes = a.integer_or("arrayBytes", limits::kDefaultPartitionArrayBytes, 4, limits::kMaxArrayBytes);
  if (s.arrayBytes % 4) a.fail("arrayBytes", "a multiple of 4");
  s.strideBytes = static_cast<uint32_t>(a.integer_or("strideBytes", limits::kDefaultPartitionStrideBytes, 4,
                                                     std::min<uint64_t>(s.arrayBytes, limits::kMaxPartitionStrideBytes)));
  if (s.strideBytes % 4) a.fail("strideBytes", "a multiple of 4");
  const uint64_t chunks = s.arrayBytes / s.strideBytes;
  if (chunks > limits::kMaxSamples)
    a.fail("arrayBytes",
           "at most " + std::to_string(limits::kMaxSamples) + " strides (one latency per chunk is buffered in shared memory)");
  s.chunks = static_cast<uint32_t>(chunks);
  const hipDeviceProp_t& p = ctx.device();
  const uint32_t blocks = static_cast<uint32_t>(p.multiProcessorCount);
  const uint64_t sharedLimit = limits::shared_limit_bytes(p);
  if (samples_shared_bytes(s.chunks) > sharedLimit)
    a.fail("arrayBytes", "at most " + std::to_string((sharedLimit - 4) / 4) + " strides on this device (its shared memory limit)");
  ensure_fits(s.mode == PartitionMode::Private ? s.arrayBytes * blocks : s.arrayBytes, "args.arrayBytes");
  return {s, blocks, static_cast<uint32_t>(sharedLimit)};
}

json::Value run_partition_op(const PartitionRequest& r, const OpContext& ctx) {
  const json::Value sms = sm_latencies_json(run_l2_partition(r.spec, r.blocks, r.sharedLimitBytes, ctx.budgetNs));
  json::Value out = json::Value::object();
  out.set("mode", r.spec.mode == PartitionMode::Private ? "private" : "shared")
      .set("arrayBytes", r.spec.arrayBytes)
      .set("strideBytes", r.spec.strideBytes)
      .set("sms", sms);
  return out;
}

}  // namespace

void register_l2(Registry& r) { r.add<PartitionRequest>("l2.partition", validate_partition, run_partition_op); }

}  // namespace topod::probe
