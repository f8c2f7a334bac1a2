// pchase, pchase.batch, pchase.pair: argument validation and result shapes
// (server/gpu/protocol.ts). The kernels live in pchase.cu.
#include <algorithm>
#include <string>
#include <vector>

#include "args.h"
#include "chains.h"
#include "pchase.h"
#include "registry.h"
#include "runtime.h"

namespace topod::probe {

namespace {

constexpr uint64_t kMaxSamples = 8192;
constexpr uint64_t kMaxRequestBytes = uint64_t{1} << 52;
constexpr uint64_t kMaxChainBytes = (uint64_t{1} << 34) - 4;  // element indices are 32-bit
constexpr uint64_t kMaxSeed = (uint64_t{1} << 53);

uint64_t shared_limit_bytes(const hipDeviceProp_t& p) {
  const size_t optin = compat::shared_mem_per_block_optin(p);
  return optin > 0 ? optin : p.sharedMemPerBlock;
}

// Reads space, arrayBytes, strideBytes and pattern of one chain; checks what
// the memory space allows.
ChainSpec read_chain(const ArgReader& a, const OpContext& ctx, uint64_t seed, bool patternRequired) {
  const hipDeviceProp_t& p = ctx.device();
  ChainSpec spec{};
  spec.space = static_cast<Space>(a.one_of("space", {TOPOD_SPACE_NAMES}));
  spec.arrayBytes = a.integer("arrayBytes", 4, kMaxRequestBytes);
  if (spec.arrayBytes % 4) a.fail("arrayBytes", "a multiple of 4");
  spec.strideBytes = a.integer("strideBytes", 4, spec.arrayBytes);
  if (spec.strideBytes % 4) a.fail("strideBytes", "a multiple of 4");
  spec.pattern = static_cast<ChasePattern>(patternRequired ? a.one_of("pattern", {"sequential", "random"})
                                                           : a.one_of_or("pattern", 0, {"sequential", "random"}));
  spec.seed = seed;
  if (spec.space == Space::Constant && spec.arrayBytes > kConstantChainElems * 4)
    a.fail("arrayBytes", "at most " + std::to_string(kConstantChainElems * 4) + " for the constant space");
  if (spec.space == Space::Shared && spec.arrayBytes > shared_limit_bytes(p))
    a.fail("arrayBytes", "at most " + std::to_string(shared_limit_bytes(p)) + " (shared memory per block) for the shared space");
  if (spec.space == Space::Texture) {
    int maxTexels = 0;
    if (hipDeviceGetAttribute(&maxTexels, hipDeviceAttributeMaxTexture1DLinear, 0) == hipSuccess && maxTexels > 0 &&
        spec.arrayBytes / 4 > static_cast<uint64_t>(maxTexels)) {
      throw ProbeFailure(ErrorCode::Unsupported, "a linear texture holds at most " + std::to_string(maxTexels) + " elements");
    }
  }
  return spec;
}

// After the free-memory check, so an array larger than the device is out_of_memory, not unsupported.
void ensure_fits_chains(const std::vector<const ChainSpec*>& chains, const char* what) {
  uint64_t total = 0;
  for (const ChainSpec* c : chains) total += c->arrayBytes;
  ensure_fits(total, what);
  for (const ChainSpec* c : chains) {
    if (c->arrayBytes > kMaxChainBytes)
      throw ProbeFailure(ErrorCode::Unsupported, "chains index with 32 bits: at most " + std::to_string(kMaxChainBytes) + " bytes each");
  }
}

ChaseTiming timing_for(const OpContext& ctx, bool warmup, uint32_t samples) {
  const hipDeviceProp_t& p = ctx.device();
  return ChaseTiming{warmup, samples, ctx.budgetNs, static_cast<uint32_t>(shared_limit_bytes(p)),
                     static_cast<uint32_t>(p.multiProcessorCount)};
}

json::Value to_json(const std::vector<uint32_t>& v) {
  json::Value out = json::Value::array();
  out.as_array().reserve(v.size());
  for (uint32_t x : v) out.push(x);
  return out;
}

// ---- pchase -----------------------------------------------------------------

struct PchaseSpec {
  ChainSpec chain;
  bool warmup;
  uint32_t samples;
  int smId;
};

PchaseSpec validate_pchase(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  const uint64_t seed = a.integer_or("seed", 1, 0, kMaxSeed);
  PchaseSpec s{read_chain(a, ctx, seed, true), a.boolean("warmup"), static_cast<uint32_t>(a.integer("samples", 1, kMaxSamples)), -1};
  if (a.has("smId")) s.smId = static_cast<int>(a.integer("smId", 0, static_cast<uint64_t>(ctx.device().multiProcessorCount - 1)));
  ensure_fits_chains({&s.chain}, "args.arrayBytes");
  return s;
}

json::Value run_pchase(const PchaseSpec& s, const OpContext& ctx) {
  ChainSet chains;
  const ChaserView view = chains.add(s.chain);
  const std::vector<ChaseRun> runs = run_chasers({view}, timing_for(ctx, s.warmup, s.samples), s.smId);
  json::Value out = json::Value::object();
  out.set("smId", runs.at(0).smId).set("latenciesCycles", to_json(runs.at(0).latenciesCycles));
  return out;
}

// ---- pchase.batch -------------------------------------------------------------

struct BatchSpec {
  std::vector<ChainSpec> chains;
  bool warmup;
  uint32_t samples;
};

BatchSpec validate_batch(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  const json::Value& list = a.array("arrayBytesList");
  const size_t maxChasers = static_cast<size_t>(ctx.device().multiProcessorCount);
  if (list.as_array().empty() || list.as_array().size() > maxChasers)
    a.fail("arrayBytesList", "a list of 1 to " + std::to_string(maxChasers) + " sizes (one chaser per SM)");
  const uint64_t seed = a.integer_or("seed", 1, 0, kMaxSeed);
  BatchSpec s{{}, a.boolean("warmup"), static_cast<uint32_t>(a.integer("samples", 1, kMaxSamples))};
  for (size_t i = 0; i < list.as_array().size(); ++i) {
    // Each entry is read as if it were the request's own arrayBytes, so all checks and messages are shared.
    json::Value one = args;
    one.set("arrayBytes", list.as_array()[i]);
    s.chains.push_back(read_chain(ArgReader(one), ctx, seed, true));
  }
  std::vector<const ChainSpec*> all;
  for (const ChainSpec& c : s.chains) all.push_back(&c);
  ensure_fits_chains(all, "args.arrayBytesList");
  return s;
}

json::Value run_batch(const BatchSpec& s, const OpContext& ctx) {
  ChainSet chains;
  std::vector<ChaserView> views;
  for (const ChainSpec& c : s.chains) views.push_back(chains.add(c));
  const std::vector<ChaseRun> runs = run_chasers(views, timing_for(ctx, s.warmup, s.samples), -1);
  json::Value series = json::Value::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    json::Value one = json::Value::object();
    one.set("arrayBytes", s.chains[i].arrayBytes).set("smId", runs[i].smId).set("latenciesCycles", to_json(runs[i].latenciesCycles));
    series.push(one);
  }
  json::Value out = json::Value::object();
  out.set("series", series);
  return out;
}

// ---- pchase.pair ----------------------------------------------------------------

struct PairSpec {
  ChainSpec first, second;
  PairPlacementSpec placement;
  uint32_t samples;
};

PairSpec validate_pair(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  const hipDeviceProp_t& p = ctx.device();
  const uint64_t seed = a.integer_or("seed", 1, 0, kMaxSeed);
  const ArgReader first = a.object("first");
  const ArgReader second = a.object("second");
  PairSpec s{read_chain(first, ctx, seed, false), read_chain(second, ctx, seed + 1, false), {}, 0};
  s.placement.sameSm = a.one_of("placement", {"same-sm", "different-sm"}) == 0;
  s.samples = static_cast<uint32_t>(a.integer("samples", 1, kMaxSamples));
  const uint64_t maxWarp = static_cast<uint64_t>(p.maxThreadsPerBlock / p.warpSize - 1);
  const uint64_t maxLane = static_cast<uint64_t>(p.warpSize - 1);
  s.placement.firstWarp = static_cast<uint32_t>(first.integer_or("warp", 0, 0, maxWarp));
  s.placement.firstLane = static_cast<uint32_t>(first.integer_or("lane", 0, 0, maxLane));
  s.placement.secondWarp = static_cast<uint32_t>(second.integer_or("warp", s.placement.sameSm ? 1 : 0, 0, maxWarp));
  s.placement.secondLane = static_cast<uint32_t>(second.integer_or("lane", 0, 0, maxLane));
  if (s.placement.sameSm && s.placement.firstWarp == s.placement.secondWarp && s.placement.firstLane == s.placement.secondLane)
    a.fail("second", "on another warp or lane than args.first for same-sm placement");
  ensure_fits_chains({&s.first, &s.second}, "args.first and args.second");
  return s;
}

json::Value run_pair_op(const PairSpec& s, const OpContext& ctx) {
  ChainSet chains;
  const ChaserView first = chains.add(s.first);
  const ChaserView second = chains.add(s.second);
  const PairRun run = run_pair(first, second, s.placement, timing_for(ctx, false, s.samples));
  json::Value out = json::Value::object();
  out.set("firstSmId", run.firstSmId)
      .set("secondSmId", run.secondSmId)
      .set("firstLatenciesCycles", to_json(run.firstLatenciesCycles))
      .set("secondLatenciesCycles", to_json(run.secondLatenciesCycles));
  return out;
}

}  // namespace

void register_pchase(Registry& r) {
  r.add<PchaseSpec>("pchase", validate_pchase, run_pchase);
  r.add<BatchSpec>("pchase.batch", validate_batch, run_batch);
  r.add<PairSpec>("pchase.pair", validate_pair, run_pair_op);
}

}  // namespace topod::probe
