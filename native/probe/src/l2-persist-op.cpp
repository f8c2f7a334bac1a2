// l2.persist: argument validation and result shape; the kernels live in
// l2-persist.cu. Rules: the list at the top of server/protocol/validate.ts
// (the simulated GPU applies the same), numbers in limits.h.
#include <algorithm>
#include <string>

#include "args.h"
#include "l2-persist.h"
#include "limits.h"
#include "registry.h"
#include "runtime.h"

namespace topod::probe {

namespace {

struct PersistRequest {
  PersistSpec spec;
  uint32_t streamBlocks;
};

uint64_t persisting_max_bytes(const hipDeviceProp_t& p) {
#if defined(TOPOD_VENDOR_NVIDIA)
  return p.persistingL2CacheMaxSize > 0 ? static_cast<uint64_t>(p.persistingL2CacheMaxSize) : 0;
#else
  (void)p;
  return 0;
#endif
}

PersistRequest validate_persist(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  PersistSpec s{};
  const uint64_t line = limits::kPersistLineBytes;
  s.arrayBytes = a.integer("arrayBytes", line, limits::kMaxArrayBytes);
  if (s.arrayBytes % line) a.fail("arrayBytes", "a multiple of " + std::to_string(line));
  s.windowBytes = a.integer("windowBytes", line, std::min<uint64_t>(s.arrayBytes, uint64_t{1} << 32));
  if (s.windowBytes % line) a.fail("windowBytes", "a multiple of " + std::to_string(line));
  const json::Value& ratio = a.value("hitRatio");
  if (!ratio.is_number() || !(ratio.as_number() > 0.0) || ratio.as_number() > 1.0) a.fail("hitRatio", "a number in (0, 1]");
  s.hitRatio = ratio.as_number();
  s.samples = static_cast<uint32_t>(a.integer("samples", 1, limits::kMaxSamples));
  const hipDeviceProp_t& p = ctx.device();
  const uint64_t maxPersisting = persisting_max_bytes(p);
  if (maxPersisting > 0 && s.windowBytes > maxPersisting)
    limits::bad_request("args.windowBytes must be at most the device's persisting L2 maximum of " + std::to_string(maxPersisting) +
                        " bytes");
  ensure_fits(s.arrayBytes, "args.arrayBytes");
  if (maxPersisting == 0) throw ProbeFailure(ErrorCode::Unsupported, "this device has no persisting L2 (persistingL2CacheMaxBytes is 0)");
  return {s, static_cast<uint32_t>(p.multiProcessorCount) * 4};
}

json::Value run_persist_op(const PersistRequest& r, const OpContext& ctx) {
  const PersistRun run = run_l2_persist(r.spec, r.streamBlocks, ctx.budgetNs);
  json::Value out = json::Value::object();
  out.set("arrayBytes", r.spec.arrayBytes)
      .set("windowBytes", r.spec.windowBytes)
      .set("hitRatio", r.spec.hitRatio)
      .set("samples", r.spec.samples)
      .set("persistingLimitBytes", run.persistingLimitBytes)
      .set("withoutCycles", json::numbers(run.withoutCycles))
      .set("withCycles", json::numbers(run.withCycles));
  return out;
}

}  // namespace

void register_l2_persist(Registry& r) { r.add<PersistRequest>("l2.persist", validate_persist, run_persist_op); }

}  // namespace topod::probe
