// pchase, pchase.batch, pchase.pair and selftest.consumer: argument
// validation and result shapes (server/protocol/ops.ts). The kernels live in pchase.cu.
#include <algorithm>
#include <string>
#include <vector>

#include "args.h"
#include "chains.h"
#include "limits.h"
#include "pchase.h"
#include "registry.h"
#include "runtime.h"

namespace topod::probe {

namespace {

// Every check below follows the rule list at the top of server/protocol/validate.ts
// (limits.h holds the numbers): device-free fields first, then device limits,
// memory and capability, so a probe without a GPU still answers bad_request for
// the former.

struct ChaseCommon {
  Space space;
  ChasePattern pattern;
  bool warmup;
  uint32_t samples;
  uint64_t seed;
};

ChasePattern read_pattern(const ArgReader& a, bool required) {
  return static_cast<ChasePattern>(required ? a.one_of("pattern", {"sequential", "random"})
                                            : a.one_of_or("pattern", 0, {"sequential", "random"}));
}

uint32_t read_samples(const ArgReader& a) { return static_cast<uint32_t>(a.integer("samples", 1, limits::kMaxSamples)); }

uint64_t read_seed(const ArgReader& a) { return a.integer_or("seed", 1, 0, limits::kMaxSeed); }

// ChaseLaunchArgs (rule 2): carveoutPercent everywhere; flushL2 and
// l2FetchGranularityBytes where the op fills its caches itself (not the pair).
struct LaunchArgs {
  bool flushL2 = false;
  int carveoutPercent = -1;              // absent: the kernel's default (LaunchSettings)
  uint32_t l2FetchGranularityBytes = 0;  // absent: the limit in force
};

enum class LaunchFields { CarveoutOnly, All };

LaunchArgs read_launch(const ArgReader& a, LaunchFields fields) {
  LaunchArgs l;
  if (fields == LaunchFields::All) {
    l.flushL2 = a.boolean_or("flushL2", false);
    if (a.has("l2FetchGranularityBytes")) {
      const json::Value& g = a.value("l2FetchGranularityBytes");
      if (!g.is_number() || (g.as_number() != 32 && g.as_number() != 64 && g.as_number() != 128))
        a.fail("l2FetchGranularityBytes", "one of 32, 64, 128");
      l.l2FetchGranularityBytes = static_cast<uint32_t>(g.as_number());
    }
  }
  if (a.has("carveoutPercent")) l.carveoutPercent = static_cast<int>(a.integer("carveoutPercent", 0, 100));
  return l;
}

// Rule 4 keeps flushing out of validation: the flush buffer (2 x the L2) is allocated when the
// op runs, after the chains, and a device too full for it answers out_of_memory then.
LaunchSettings settings_for(const LaunchArgs& l, const OpContext& ctx) {
  LaunchSettings s;
  s.carveoutPercent = l.carveoutPercent;
  s.flushBytes = l.flushL2 ? 2 * static_cast<uint64_t>(ctx.device().l2CacheSize) : 0;
  s.l2FetchGranularityBytes = l.l2FetchGranularityBytes;
  return s;
}

json::Value to_json(const LaunchInfo& l) {
  json::Value out = json::Value::object();
  out.set("carveoutPercent", l.carveoutPercent).set("sharedBytesPerBlock", l.sharedBytesPerBlock).set("flushedL2", l.flushedL2);
  if (l.l2FetchGranularityBytes) out.set("l2FetchGranularityBytes", l.l2FetchGranularityBytes);
  return out;
}

ChaseCommon read_common(const ArgReader& a) {
  ChaseCommon c{};
  c.space = static_cast<Space>(a.one_of("space", {TOPOD_SPACE_NAMES}));
  c.pattern = read_pattern(a, true);
  c.warmup = a.boolean("warmup");
  c.samples = read_samples(a);
  c.seed = read_seed(a);
  return c;
}

// Rule 2 for one chain: arrayBytes (the value `v`, named `name`) and the reader's strideBytes.
ChainSpec read_shape(const ArgReader& a, Space space, const json::Value& v, const std::string& name, ChasePattern pattern, uint64_t seed) {
  ChainSpec spec{space, a.checked_integer(v, name, 4, limits::kMaxArrayBytes), 0, pattern, seed};
  if (spec.arrayBytes % 4) a.fail(name, "a multiple of 4");
  spec.strideBytes = a.integer("strideBytes", 4, spec.arrayBytes);
  if (spec.strideBytes % 4) a.fail("strideBytes", "a multiple of 4");
  return spec;
}

std::vector<limits::ChainSize> sizes(const std::vector<const ChainSpec*>& chains) {
  std::vector<limits::ChainSize> out;
  for (const ChainSpec* c : chains) out.push_back({c->space, c->arrayBytes});
  return out;
}

ChaseTiming timing_for(const OpContext& ctx, bool warmup, uint32_t samples) {
  const hipDeviceProp_t& p = ctx.device();
  return ChaseTiming{warmup, samples, ctx.budgetNs, static_cast<uint32_t>(limits::shared_limit_bytes(p)),
                     static_cast<uint32_t>(p.multiProcessorCount)};
}

// ---- pchase -----------------------------------------------------------------

// Also selftest.consumer's spec: same fields, same rules.
struct PchaseSpec {
  ChainSpec chain;
  bool warmup;
  uint32_t samples;
  int smId;
  LaunchArgs launch;
};

PchaseSpec validate_pchase(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  const ChaseCommon c = read_common(a);
  PchaseSpec s{read_shape(a, c.space, a.value("arrayBytes"), "arrayBytes", c.pattern, c.seed), c.warmup, c.samples, -1, {}};
  s.launch = read_launch(a, LaunchFields::All);
  const hipDeviceProp_t& p = ctx.device();
  if (a.has("smId")) s.smId = static_cast<int>(a.integer("smId", 0, static_cast<uint64_t>(p.multiProcessorCount - 1)));
  const std::vector<limits::ChainSize> chains = sizes({&s.chain});
  limits::check_space_limits(chains, limits::chaser_shared_bytes(chains[0], s.samples), p);
  limits::check_chains_fit(chains, "args.arrayBytes");
  return s;
}

json::Value run_pchase(const PchaseSpec& s, const OpContext& ctx) {
  ChainSet chains;
  const ChaserView view = chains.add(s.chain);
  const ChaseOutcome o = run_chasers({view}, timing_for(ctx, s.warmup, s.samples), s.smId, settings_for(s.launch, ctx));
  json::Value out = json::Value::object();
  out.set("smId", o.runs.at(0).smId).set("latenciesCycles", json::numbers(o.runs.at(0).latenciesCycles)).set("launch", to_json(o.launch));
  return out;
}

// ---- selftest.consumer ----------------------------------------------------------

json::Value run_consumer_selftest_op(const PchaseSpec& s, const OpContext& ctx) {
  ChainSet chains;
  const ChaserView view = chains.add(s.chain);
  const ConsumerSelfTestRun run = run_consumer_selftest(view, timing_for(ctx, s.warmup, s.samples), s.smId, settings_for(s.launch, ctx));
  json::Value out = json::Value::object();
  out.set("smId", run.smId)
      .set("consumedLatenciesCycles", json::numbers(run.consumedLatenciesCycles))
      .set("unconsumedLatenciesCycles", json::numbers(run.unconsumedLatenciesCycles))
      .set("launch", to_json(run.launch));
  return out;
}

// ---- pchase.batch -------------------------------------------------------------

struct BatchSpec {
  std::vector<ChainSpec> chains;
  bool warmup;
  uint32_t samples;
  LaunchArgs launch;
};

BatchSpec validate_batch(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  const ChaseCommon c = read_common(a);
  const json::Value& list = a.array("arrayBytesList");
  if (list.as_array().empty()) a.fail("arrayBytesList", "a non-empty array of sizes");
  BatchSpec s{{}, c.warmup, c.samples, {}};
  for (size_t i = 0; i < list.as_array().size(); ++i) {
    s.chains.push_back(read_shape(a, c.space, list.as_array()[i], "arrayBytesList[" + std::to_string(i) + "]", c.pattern, c.seed));
  }
  s.launch = read_launch(a, LaunchFields::All);
  const hipDeviceProp_t& p = ctx.device();
  const size_t maxChasers = static_cast<size_t>(p.multiProcessorCount);
  if (s.chains.size() > maxChasers) a.fail("arrayBytesList", "at most " + std::to_string(maxChasers) + " sizes (one chaser per SM)");
  std::vector<const ChainSpec*> all;
  for (const ChainSpec& chain : s.chains) all.push_back(&chain);
  const std::vector<limits::ChainSize> chains = sizes(all);
  uint64_t blockShared = 0;
  for (const limits::ChainSize& chain : chains) blockShared = std::max(blockShared, limits::chaser_shared_bytes(chain, s.samples));
  limits::check_space_limits(chains, blockShared, p);
  limits::check_chains_fit(chains, "args.arrayBytesList");
  return s;
}

json::Value run_batch(const BatchSpec& s, const OpContext& ctx) {
  ChainSet chains;
  std::vector<ChaserView> views;
  for (const ChainSpec& c : s.chains) views.push_back(chains.add(c));
  const ChaseOutcome o = run_chasers(views, timing_for(ctx, s.warmup, s.samples), -1, settings_for(s.launch, ctx));
  json::Value series = json::Value::array();
  for (size_t i = 0; i < o.runs.size(); ++i) {
    json::Value one = json::Value::object();
    one.set("arrayBytes", s.chains[i].arrayBytes)
        .set("smId", o.runs[i].smId)
        .set("latenciesCycles", json::numbers(o.runs[i].latenciesCycles));
    series.push(one);
  }
  json::Value out = json::Value::object();
  out.set("series", series).set("launch", to_json(o.launch));
  return out;
}

// ---- pchase.pair ----------------------------------------------------------------

struct PairSpec {
  ChainSpec first, second;
  PairPlacementSpec placement;
  uint32_t samples;
  LaunchArgs launch;
};

ChainSpec read_chaser(const ArgReader& c, uint64_t seed) {
  const Space space = static_cast<Space>(c.one_of("space", {TOPOD_SPACE_NAMES}));
  ChainSpec spec = read_shape(c, space, c.value("arrayBytes"), "arrayBytes", ChasePattern{}, seed);
  spec.pattern = read_pattern(c, false);
  return spec;
}

PairSpec validate_pair(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  const uint64_t seed = read_seed(a);
  const ArgReader first = a.object("first");
  const ArgReader second = a.object("second");
  PairSpec s{read_chaser(first, seed), read_chaser(second, seed + 1), {}, 0, {}};
  s.placement.sameSm = a.one_of("placement", {"same-sm", "different-sm"}) == 0;
  if (a.has("smIds")) {
    const json::Value& ids = a.array("smIds");
    if (ids.as_array().size() != 2) a.fail("smIds", "an array of 2 SM ids");
    s.placement.firstSm = static_cast<uint32_t>(a.checked_integer(ids.as_array()[0], "smIds", 0, limits::kMaxSeed));
    s.placement.secondSm = static_cast<uint32_t>(a.checked_integer(ids.as_array()[1], "smIds", 0, limits::kMaxSeed));
    if (s.placement.firstSm == s.placement.secondSm) a.fail("smIds", "2 distinct SM ids");
    if (s.placement.sameSm) a.fail("placement", "different-sm with smIds");
    s.placement.chosenSms = true;
  }
  s.samples = read_samples(a);
  s.launch = read_launch(a, LaunchFields::CarveoutOnly);
  const hipDeviceProp_t& p = ctx.device();
  const uint64_t maxWarp = static_cast<uint64_t>(p.maxThreadsPerBlock / p.warpSize - 1);
  const uint64_t maxLane = static_cast<uint64_t>(p.warpSize - 1);
  s.placement.firstWarp = static_cast<uint32_t>(first.integer_or("warp", 0, 0, maxWarp));
  s.placement.firstLane = static_cast<uint32_t>(first.integer_or("lane", 0, 0, maxLane));
  s.placement.secondWarp = static_cast<uint32_t>(second.integer_or("warp", s.placement.sameSm ? 1 : 0, 0, maxWarp));
  s.placement.secondLane = static_cast<uint32_t>(second.integer_or("lane", 0, 0, maxLane));
  if (s.placement.sameSm && s.placement.firstWarp == s.placement.secondWarp && s.placement.firstLane == s.placement.secondLane)
    a.fail("second", "on another warp or lane than args.first for same-sm placement");
  if (!s.placement.sameSm && p.multiProcessorCount < 2) a.fail("placement", "same-sm on a device with one SM");
  if (s.placement.chosenSms) {
    for (uint32_t sm : {s.placement.firstSm, s.placement.secondSm})
      if (sm >= static_cast<uint32_t>(p.multiProcessorCount))
        limits::bad_request("args.smIds must hold SM ids in [0, " + std::to_string(p.multiProcessorCount - 1) + "] (got " +
                            std::to_string(sm) + ")");
    // Several blocks per SM so that every SM runs one; those off the chosen SMs exit at once.
    s.placement.gridBlocks = static_cast<uint32_t>(p.multiProcessorCount) * 4u;
  }
  const std::vector<limits::ChainSize> chains = sizes({&s.first, &s.second});
  const uint64_t firstShared = limits::chaser_shared_bytes(chains[0], s.samples);
  const uint64_t secondShared = limits::chaser_shared_bytes(chains[1], s.samples);
  limits::check_space_limits(chains, s.placement.sameSm ? firstShared + secondShared : std::max(firstShared, secondShared), p);
  limits::check_chains_fit(chains, "args.first and args.second");
  return s;
}

json::Value run_pair_op(const PairSpec& s, const OpContext& ctx) {
  ChainSet chains;
  const ChaserView first = chains.add(s.first);
  const ChaserView second = chains.add(s.second);
  const PairRun run = run_pair(first, second, s.placement, timing_for(ctx, false, s.samples), settings_for(s.launch, ctx));
  json::Value out = json::Value::object();
  out.set("firstSmId", run.firstSmId)
      .set("secondSmId", run.secondSmId)
      .set("firstLatenciesCycles", json::numbers(run.firstLatenciesCycles))
      .set("secondLatenciesCycles", json::numbers(run.secondLatenciesCycles))
      .set("launch", to_json(run.launch));
  return out;
}

}  // namespace

void register_pchase(Registry& r) {
  r.add<PchaseSpec>("pchase", validate_pchase, run_pchase);
  r.add<BatchSpec>("pchase.batch", validate_batch, run_batch);
  r.add<PairSpec>("pchase.pair", validate_pair, run_pair_op);
}

void register_selftest(Registry& r) { r.add<PchaseSpec>("selftest.consumer", validate_pchase, run_consumer_selftest_op); }

}  // namespace topod::probe
