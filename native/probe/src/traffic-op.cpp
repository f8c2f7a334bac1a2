// traffic: argument validation and result shape; the kernels live in
// traffic.cu, the counters in traffic-counters.cpp. Rules: the list at the top
// of server/protocol/validate.ts (the simulated GPU applies the same, from
// server/protocol/validate-traffic.ts), numbers in limits.h.
#include <chrono>
#include <string>

#include "args.h"
#include "limits.h"
#include "registry.h"
#include "runtime.h"
#include "traffic-counters.h"
#include "traffic.h"

namespace topod::probe {

namespace {

enum class TrafficMethod { Counters, Timing };

struct TrafficRequest {
  TrafficMethod method;
  uint64_t footprintBytes;
  std::vector<TrafficCase> cases;
  uint32_t repetitions;
  std::vector<std::string> metrics;
  uint32_t l2FetchGranularityBytes;  // 0: leave the context's limit as it is
  uint64_t flushBytes;
  uint32_t multiprocessors;
};

const char* const kPatternNames[] = {"read", "write", "rmw", "vecmul"};
const char* const kTargetNames[] = {"fresh", "written"};
const char* const kDefaultMetrics[] = {"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_op_read.sum",
                                       "lts__t_sectors_op_write.sum"};

bool metric_name_ok(const std::string& name) {
  if (name.empty() || name.size() > limits::kMaxTrafficMetricChars) return false;
  for (char ch : name)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.')) return false;
  return true;
}

TrafficRequest validate_traffic(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  TrafficRequest r{};
  r.method = a.one_of("method", {"counters", "timing"}) == 0 ? TrafficMethod::Counters : TrafficMethod::Timing;
  r.footprintBytes = a.integer("footprintBytes", 16, limits::kMaxArrayBytes);
  if (r.footprintBytes % 16) a.fail("footprintBytes", "a multiple of 16 (the widest element)");
  const json::Value& cases = a.array("cases");
  if (cases.as_array().empty() || cases.as_array().size() > limits::kMaxTrafficCases)
    a.fail("cases", "an array of 1 to " + std::to_string(limits::kMaxTrafficCases) + " cases");
  for (const json::Value& raw : cases.as_array()) {
    if (!raw.is_object()) a.fail("cases", "an array of case objects");
    const ArgReader c(raw, "args.cases[].");
    TrafficCase t{};
    t.pattern = static_cast<TrafficPattern>(c.one_of("pattern", {kPatternNames[0], kPatternNames[1], kPatternNames[2], kPatternNames[3]}));
    t.elementBytes = static_cast<uint32_t>(c.integer("elementBytes", 4, 16));
    if (t.elementBytes != 4 && t.elementBytes != 8 && t.elementBytes != 16) c.fail("elementBytes", "one of 4, 8, 16");
    t.strideElements = c.integer("strideElements", 1, r.footprintBytes / t.elementBytes);
    t.target = c.one_of_or("target", 1, {kTargetNames[0], kTargetNames[1]}) == 0 ? TrafficTarget::Fresh : TrafficTarget::Written;
    r.cases.push_back(t);
  }
  r.repetitions = static_cast<uint32_t>(a.integer_or("repetitions", limits::kDefaultTrafficRepetitions, 1, limits::kMaxRepetitions));
  if (a.has("metrics")) {
    const json::Value& list = a.array("metrics");
    if (list.as_array().empty() || list.as_array().size() > limits::kMaxTrafficMetrics)
      a.fail("metrics", "an array of 1 to " + std::to_string(limits::kMaxTrafficMetrics) + " metric names");
    for (const json::Value& m : list.as_array()) {
      if (!m.is_string() || !metric_name_ok(m.as_string()))
        a.fail("metrics",
               "metric names of lower-case letters, digits, '_' and '.' (at most " + std::to_string(limits::kMaxTrafficMetricChars) + ")");
      r.metrics.push_back(m.as_string());
    }
  } else {
    r.metrics.assign(std::begin(kDefaultMetrics), std::end(kDefaultMetrics));
  }
  r.l2FetchGranularityBytes = static_cast<uint32_t>(a.integer_or("l2FetchGranularityBytes", 0, 32, 128));
  if (a.has("l2FetchGranularityBytes") && r.l2FetchGranularityBytes != 32 && r.l2FetchGranularityBytes != 64 &&
      r.l2FetchGranularityBytes != 128)
    a.fail("l2FetchGranularityBytes", "one of 32, 64, 128");
  const hipDeviceProp_t& p = ctx.device();
  r.flushBytes = limits::kTrafficFlushL2Multiple * static_cast<uint64_t>(p.l2CacheSize);
  r.multiprocessors = static_cast<uint32_t>(p.multiProcessorCount);
  ensure_fits(3 * r.footprintBytes + r.flushBytes, "args.footprintBytes (three arrays and the L2 flush buffer)");
  return r;
}

json::Value case_json(const TrafficCase& c, uint64_t footprintBytes) {
  json::Value out = json::Value::object();
  out.set("pattern", kPatternNames[static_cast<int>(c.pattern)])
      .set("elementBytes", c.elementBytes)
      .set("strideElements", c.strideElements)
      .set("target", kTargetNames[static_cast<int>(c.target)])
      .set("accesses", traffic_accesses(footprintBytes, c));
  return out;
}

json::Value numbers(const std::vector<double>& values) {
  json::Value list = json::Value::array();
  for (double v : values) list.push(v);
  return list;
}

// Sets cudaLimitMaxL2FetchGranularity for the request and puts the previous value back after it.
class FetchGranularity {
 public:
  explicit FetchGranularity(uint32_t bytes) {
    size_t current = 0;
    known_ = compat::get_l2_fetch_granularity(&current) == hipSuccess;
    if (!known_) (void)hipGetLastError();
    previous_ = current;
    if (bytes == 0) return;
    if (!known_) throw ProbeFailure(ErrorCode::Unsupported, "this runtime has no L2 fetch granularity limit");
    check(compat::set_l2_fetch_granularity(bytes), "set the L2 fetch granularity");
    changed_ = true;
  }
  ~FetchGranularity() {
    if (changed_) (void)compat::set_l2_fetch_granularity(previous_);
  }
  FetchGranularity(const FetchGranularity&) = delete;
  FetchGranularity& operator=(const FetchGranularity&) = delete;

  // The limit in effect now (null where the runtime has none).
  json::Value effective() const {
    size_t now = 0;
    if (!known_ || compat::get_l2_fetch_granularity(&now) != hipSuccess) return json::Value();
    return json::Value(static_cast<double>(now));
  }

 private:
  bool known_ = false;
  bool changed_ = false;
  size_t previous_ = 0;
};

json::Value run_traffic_op(const TrafficRequest& r, const OpContext& ctx) {
  const auto started = std::chrono::steady_clock::now();
  auto check_budget = [&] {
    const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count();
    if (static_cast<uint64_t>(elapsed) > ctx.budgetNs) throw ProbeFailure(ErrorCode::Timeout, "traffic overran its deadline between cases");
  };
  // Counters first: a GPU without them answers unsupported before any array is allocated.
  std::unique_ptr<TrafficCounters> counters;
  if (r.method == TrafficMethod::Counters) counters = std::make_unique<TrafficCounters>(r.metrics);
  const FetchGranularity granularity(r.l2FetchGranularityBytes);
  TrafficArrays arrays(r.footprintBytes, r.flushBytes, r.multiprocessors);
  json::Value results = json::Value::array();
  for (const TrafficCase& c : r.cases) {
    check_budget();
    json::Value one = case_json(c, r.footprintBytes);
    if (counters) {
      if (c.pattern != TrafficPattern::Read) arrays.prepare_target(c.target);
      // Three ranges: the flush before (the L2 holds nothing of the arrays), the pattern, the flush after
      // (the write-back of every line the pattern left dirty).
      const std::vector<CounterRange> ranges = counters->measure(
          [&] {
            arrays.flush();
            arrays.launch(c);
            check_launch("traffic kernel");
            arrays.flush();
          },
          4);
      if (ranges.size() != 3)
        throw ProbeFailure(ErrorCode::Internal,
                           "expected 3 profiled kernels (flush, pattern, flush), CUPTI reported " + std::to_string(ranges.size()));
      one.set("before", numbers(ranges[0].values)).set("during", numbers(ranges[1].values)).set("after", numbers(ranges[2].values));
      one.set("kernel", ranges[1].name);
    } else {
      one.set("secondsPerRepetition", numbers(time_traffic_case(arrays, c, r.repetitions)));
    }
    results.push(one);
  }
  json::Value out = json::Value::object();
  out.set("method", r.method == TrafficMethod::Counters ? "counters" : "timing")
      .set("footprintBytes", r.footprintBytes)
      .set("flushBytes", r.flushBytes)
      .set("l2FetchGranularityBytes", granularity.effective());
  if (counters) {
    json::Value names = json::Value::array();
    for (const std::string& m : r.metrics) names.push(m);
    out.set("metrics", names)
        .set("passes", static_cast<double>(counters->passes()))
        .set("library", counters->library())
        .set("chip", counters->chip());
  }
  out.set("cases", results);
  return out;
}

}  // namespace

void register_traffic(Registry& r) { r.add<TrafficRequest>("traffic", validate_traffic, run_traffic_op); }

}  // namespace topod::probe
